import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { errorMessage, ipc } from '../../lib/ipc.ts';
import { toastError } from '../toasts/index.ts';
import type { LibrarySlice } from './actions.ts';
import { defaultFilters, initialState, type LibraryFilters } from './initialState.ts';
import { spliceFirstPage } from './pages.ts';
import { feedItem, feedQuery, libraryQuery } from './selectors.ts';

type Page = { items: LibraryItem[]; total: number; nextCursor: string | null };

async function fetchPage(filters: LibraryFilters, cursor: string | null): Promise<Page> {
  if (filters.publicFeed) {
    const res = await ipc().library.feed(feedQuery(filters, cursor ? Number(cursor) : 0));
    return {
      items: res.items.map(feedItem),
      total: res.total,
      nextCursor: res.nextPage === null ? null : String(res.nextPage),
    };
  }
  return ipc().library.query(libraryQuery(filters, cursor));
}

/**
 * The query and its pages: filters, the first page, the pages loaded as the grid scrolls. The
 * page on its way belongs here, so the store's reset (which forgets it) does too.
 */
export const createListingSlice: LibrarySlice<
  'reload' | 'loadMore' | 'ensureLoaded' | 'setFilters' | 'clearFilters' | 'reset'
> = (set, get) => {
  let inflight: Promise<void> | null = null;
  return {
    async reload(opts = {}) {
      const generation = get().generation + 1;
      // A loaded grid stays on screen (and keeps its scroll position) while the query reruns.
      const wasReady = get().status === 'ready';
      const soft = wasReady && opts.keepLoaded === true;
      // Library cursors are keyset positions, still valid for a refresh of the same query, so
      // loading on may go on meanwhile and the fresh first page is spliced on. A new query's
      // pages (and the feed's offsets, which shift) are not: nothing more of the old result is
      // loaded until the new first page is in.
      const splice = soft && !get().filters.publicFeed;
      set({
        generation,
        status: wasReady ? 'ready' : 'loading',
        error: null,
        loadingMore: false,
        ...(splice ? {} : { nextCursor: null }),
      });
      inflight = null;
      try {
        const page = await fetchPage(get().filters, null);
        if (get().generation !== generation) return;
        set((s) => ({
          status: 'ready',
          ...(splice ? spliceFirstPage(s, page) : page),
          selected: soft ? s.selected : {},
          anchor: soft ? s.anchor : null,
        }));
      } catch (error) {
        if (get().generation !== generation) return;
        set({ status: 'error', error: errorMessage(error), items: [], total: 0, nextCursor: null });
      }
    },
    loadMore() {
      const { nextCursor, generation, status } = get();
      if (!nextCursor || status !== 'ready') return Promise.resolve();
      if (inflight) return inflight;
      set({ loadingMore: true });
      // Set before the page's end can run (an await comes first): its own mark, compared below.
      let run: Promise<void> | null = null;
      run = (async () => {
        try {
          const page = await fetchPage(get().filters, nextCursor);
          if (get().generation !== generation) return;
          set((s) => ({ items: [...s.items, ...page.items], total: page.total, nextCursor: page.nextCursor }));
        } catch (error) {
          if (get().generation === generation) toastError('Could not load more of the library', error);
          set({ nextCursor: null });
        } finally {
          if (get().generation === generation) set({ loadingMore: false });
          // Only this page's own mark: a refresh meanwhile forgot it, and the refreshed query's
          // page on its way since then is the one a caller must wait for, not ask for again (two
          // copies of a page made the grid's list longer than the library, and it stopped short).
          if (inflight === run) inflight = null;
        }
      })();
      inflight = run;
      return run;
    },
    async ensureLoaded(index) {
      while (get().items.length <= index && get().nextCursor && get().status === 'ready') {
        const { generation, nextCursor: cursor } = get();
        const before = get().items.length;
        await get().loadMore();
        // A refresh that began meanwhile dropped that page: go on from what the refresh keeps
        // (stopping here would leave a deep-scrolled grid on skeletons, as nothing else asks).
        if (get().generation !== generation) continue;
        // A feed page can be empty (it held only the caller's items) and still move the cursor on.
        if (get().items.length === before && get().nextCursor === cursor) return;
      }
    },
    setFilters(patch) {
      set((s) => ({
        filters: { ...s.filters, ...patch },
        detailId: patch.publicFeed !== undefined ? null : s.detailId,
      }));
      void get().reload();
    },
    clearFilters() {
      set((s) => ({ filters: { ...defaultFilters, publicFeed: s.filters.publicFeed, origin: s.filters.origin } }));
      void get().reload();
    },
    reset() {
      inflight = null;
      set(initialState);
    },
  };
};
