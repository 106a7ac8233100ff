import type { LibraryItem } from '../../../../shared/ipc/index.ts';

export interface LoadedPages {
  items: LibraryItem[];
  total: number;
  nextCursor: string | null;
}

/**
 * A refresh (a sync, a finished job) refetches only the first page. Library cursors are keyset
 * positions, so what was loaded below the fresh page's last item is still in place: keep it, and
 * its cursor, instead of dropping a creator scrolled 9,000 items deep back to skeletons and
 * twenty sequential page loads. When the fresh page does not reach into what was loaded (many
 * new items, or a different result), it replaces everything and the grid loads on from there.
 */
export function spliceFirstPage(loaded: LoadedPages, first: LoadedPages): LoadedPages {
  const last = first.items.at(-1);
  if (!first.nextCursor || !last) return first;
  const at = loaded.items.findIndex((e) => e.item.id === last.item.id);
  if (at < 0 || at === loaded.items.length - 1) return first;
  return { items: [...first.items, ...loaded.items.slice(at + 1)], total: first.total, nextCursor: loaded.nextCursor };
}
