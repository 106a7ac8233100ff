import { create } from 'zustand';
import type { Job, LibraryItem } from '../../../../../shared/ipc/index.ts';
import { ipc } from '../../../lib/ipc.ts';

interface TakesState {
  /** A finished job's first item as the library knows it, by item id; null when it could not be read. */
  byItem: Record<string, LibraryItem | null>;
  /** Reads the item once; later calls for the same id do nothing. */
  want: (itemId: string) => void;
}

const asked = new Set<string>();

/**
 * The takes the queue and the jobs popover show as thumbnails: one `library.get` per finished
 * job's first item, kept for the window's life (an item's thumbnail and file do not change).
 */
export const useTakes = create<TakesState>()((set) => ({
  byItem: {},
  want(itemId) {
    if (asked.has(itemId)) return;
    asked.add(itemId);
    ipc()
      .library.get({ id: itemId })
      .then(
        (entry) => set((s) => ({ byItem: { ...s.byItem, [itemId]: entry } })),
        () => set((s) => ({ byItem: { ...s.byItem, [itemId]: null } })),
      );
  },
}));

/** The item a job's thumbnail shows: its first result, once it has one. */
export function takeItemId(job: Job): string | null {
  return job.result?.itemIds[0] ?? null;
}
