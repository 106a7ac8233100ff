import { create } from 'zustand';
import type { Job, LibraryItem } from '../../../../../shared/ipc/index.ts';
import { ipc, onEvent } from '../../../lib/ipc.ts';

interface TakesState {
  /** A finished job's first item as the library knows it, by item id; null while it cannot be read. */
  byItem: Record<string, LibraryItem | null>;
  /** Reads the item once; later calls for the same id do nothing until the library reports it changed. */
  want: (itemId: string) => void;
}

const asked = new Set<string>();
let stopListening: (() => void) | null = null;

/**
 * A job reads Done as soon as its result arrives, and its items enter the library index just
 * after: an item not found yet (or since changed: its download, its preview) is read again when
 * the library reports it, never polled.
 */
function listen(): void {
  stopListening ??= onEvent('library.changed', ({ change }) => {
    for (const id of change.ids) {
      if (!asked.has(id)) continue;
      asked.delete(id);
      useTakes.getState().want(id);
    }
  });
}

/**
 * The takes the queue and the jobs popover show as thumbnails: one `library.get` per finished
 * job's first item, kept for the window's life.
 */
export const useTakes = create<TakesState>()((set) => ({
  byItem: {},
  want(itemId) {
    if (asked.has(itemId)) return;
    asked.add(itemId);
    listen();
    ipc()
      .library.get({ id: itemId })
      .then(
        (entry) => set((s) => ({ byItem: { ...s.byItem, [itemId]: entry } })),
        () => set((s) => ({ byItem: { ...s.byItem, [itemId]: s.byItem[itemId] ?? null } })),
      );
  },
}));

/** Tests start from no takes and no listener. */
export function resetTakes(): void {
  asked.clear();
  stopListening?.();
  stopListening = null;
  useTakes.setState({ byItem: {} });
}

/** The item a job's thumbnail shows: its first result, once it has one. */
export function takeItemId(job: Job): string | null {
  return job.result?.itemIds[0] ?? null;
}
