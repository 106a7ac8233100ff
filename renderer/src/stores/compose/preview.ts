import { withDeadline } from '../../lib/deadline.ts';
import { errorMessage } from '../../lib/ipc.ts';
import type { ComposeSlice } from './actions.ts';
import { previewRouting } from './api.ts';
import { initialState } from './initialState.ts';
import { buildRequest, endFrameFor } from './selectors.ts';

/** Debounce of the routing preview: a burst of edits costs one call. */
export const PREVIEW_DEBOUNCE_MS = 250;
let previewTimer: ReturnType<typeof setTimeout> | null = null;
let previewSeq = 0;

/** Drops the preview call waiting for its debounce, and makes any answer on its way stale. */
export function cancelPreview(): void {
  if (previewTimer) clearTimeout(previewTimer);
  previewTimer = null;
  previewSeq++;
}

/** The service's routing preview of the request as it stands: where it would go, and its cost. */
export const createPreviewSlice: ComposeSlice<'refreshPreview'> = (set, get) => ({
  refreshPreview(model) {
    const state = get();
    // Variations are routed by the service from their source video: there is nothing to preview.
    if (!model || state.variationOf) {
      cancelPreview();
      set({ preview: initialState.preview });
      return;
    }
    const request = buildRequest(state, model);
    const { routing: _routing, ...routed } = request;
    const frame = state.media === 'video' ? state.startFrame : null;
    const end = endFrameFor(state, model);
    const key = JSON.stringify([
      state.media,
      routed,
      frame ? [frame.source, frame.name, frame.previewUrl] : null,
      end ? [end.source, end.name, end.previewUrl] : null,
    ]);
    // The same request as the one shown or on its way: nothing to ask.
    if (key === state.preview.key && state.preview.status !== 'error') return;
    if (previewTimer) clearTimeout(previewTimer);
    previewTimer = null;
    const seq = ++previewSeq;
    set({ preview: { ...get().preview, status: 'loading', key } });
    previewTimer = setTimeout(() => {
      previewTimer = null;
      withDeadline(previewRouting(request, frame, end), 'The price and routing')
        .then((data) => {
          if (seq === previewSeq) set({ preview: { status: 'ready', data, error: null, key } });
        })
        .catch((error: unknown) => {
          if (seq === previewSeq) set({ preview: { status: 'error', data: null, error: errorMessage(error), key } });
        });
    }, PREVIEW_DEBOUNCE_MS);
  },
});
