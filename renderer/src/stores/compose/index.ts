import { create } from 'zustand';
import type { ComposeStore } from './actions.ts';
import { createDraftSlice } from './draft.ts';
import { initialState, MAX_VARIATIONS } from './initialState.ts';
import { cancelPreview, createPreviewSlice } from './preview.ts';
import { createStartFrameSlice } from './startFrame.ts';
import { createSubmitSlice } from './submit.ts';

export type { ComposeActions, ComposeStore } from './actions.ts';

export const useCompose = create<ComposeStore>()((...store) => ({
  ...initialState,
  ...createDraftSlice(...store),
  ...createStartFrameSlice(...store),
  ...createSubmitSlice(...store),
  ...createPreviewSlice(...store),
  reset() {
    const [set] = store;
    cancelPreview();
    set({ ...initialState, history: [] });
  },
}));

export { MAX_VARIATIONS };
export { MAX_SOURCE_VARIATIONS } from './startFrame.ts';
export { PREVIEW_DEBOUNCE_MS } from './preview.ts';
