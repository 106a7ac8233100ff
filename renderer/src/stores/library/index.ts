import { create } from 'zustand';
import { useShell } from '../../lib/shell/index.ts';
import type { LibraryStore } from './actions.ts';
import { initialState } from './initialState.ts';
import { createItemsSlice } from './items.ts';
import { createListingSlice } from './listing.ts';
import { createSelectionSlice } from './selection.ts';
import { selectedIds } from './selectors.ts';

export type { LibraryActions, LibraryStore } from './actions.ts';

export const useLibrary = create<LibraryStore>()((...store) => ({
  ...initialState,
  ...createListingSlice(...store),
  ...createSelectionSlice(...store),
  ...createItemsSlice(...store),
}));

export { selectedIds };

/**
 * "Open in Library" (a finished job, a notification): the Library with that item's detail open,
 * in the creator's own library even when the public feed was showing.
 */
export function openInLibrary(id: string): Promise<void> {
  const lib = useLibrary.getState();
  if (lib.filters.publicFeed) lib.setFilters({ publicFeed: false });
  useShell.getState().go('library');
  return useLibrary.getState().openById(id);
}
