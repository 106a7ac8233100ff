import { collectionIdsOf, countMatching } from './counts.ts';
import type { LibraryQuery } from './query.ts';
import type { LibraryItem, LibraryPage, LibraryStore } from './store.ts';

/** A page of the library as a grid shows it: its items, their collections and chains, and how many match in all. */
export interface LibraryListing {
  page: LibraryPage;
  collections: Map<string, string[]>;
  chains: ReturnType<LibraryStore['chains']['badges']>;
  /** Every item the query matches, over all pages. */
  total: number;
}

/**
 * One page of a library query with what its tiles show. `seen` is told the page's items first
 * (the URL refresher starts from them), before the rest is read.
 */
export function listLibrary(
  library: Pick<LibraryStore, 'db' | 'query' | 'chains'>,
  query: LibraryQuery,
  now: number,
  seen: (items: readonly LibraryItem[]) => void,
): LibraryListing {
  const page = library.query(query);
  seen(page.items);
  const itemIds = page.items.map((i) => i.item.id);
  const collections = collectionIdsOf(library.db, itemIds);
  const chains = library.chains.badges(itemIds);
  // -1 when the query cannot be counted from the index that way (counts.ts): the page counts itself.
  const total = countMatching(library.db, query, now);
  return { page, collections, chains, total: total >= 0 ? total : page.items.length };
}
