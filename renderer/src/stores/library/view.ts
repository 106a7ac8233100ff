import type { LibraryState } from './initialState.ts';
import { libraryView, type LibraryView } from './layout.ts';

let cached: { items: unknown; expanded: unknown; grouped: boolean; view: LibraryView } | null = null;

/**
 * The grid's view of the store (stores/library/layout.ts), made again only when the loaded items,
 * the open stacks or the mode change: the grid and the selection (which counts in the grid's
 * order) share one copy. The public feed is someone else's takes: shown plain, not grouped.
 */
export function gridView(state: Pick<LibraryState, 'items' | 'expanded' | 'filters'>): LibraryView {
  const grouped = !state.filters.publicFeed;
  if (cached && cached.items === state.items && cached.expanded === state.expanded && cached.grouped === grouped)
    return cached.view;
  const view = libraryView(state.items, grouped, state.expanded);
  cached = { items: state.items, expanded: state.expanded, grouped, view };
  return view;
}
