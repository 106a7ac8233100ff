import { create } from 'zustand';
import type { ExportFormat, LibraryItem, LocalFile } from '../../../../shared/ipc/index.ts';
import { errorMessage, ipc } from '../../lib/ipc.ts';
import { useShell } from '../../lib/shell/index.ts';
import { toastError, toastSuccess } from '../toasts/index.ts';
import { defaultFilters, initialState, type LibraryFilters, type LibraryState } from './initialState.ts';
import { spliceFirstPage } from './pages.ts';
import { feedItem, feedQuery, libraryQuery, selectedIds } from './selectors.ts';

export interface LibraryActions {
  /**
   * Runs the query again from the first page. `keepLoaded` (a sync, a finished job, Refresh) is
   * the same query refreshed: the selection and the pages loaded below the first one stay.
   */
  reload: (opts?: { keepLoaded?: boolean }) => Promise<void>;
  /** Fetches the next page, if any. */
  loadMore: () => Promise<void>;
  /** Loads pages until `index` is loaded (the grid scrolled there) or nothing is left. */
  ensureLoaded: (index: number) => Promise<void>;
  setFilters: (patch: Partial<LibraryFilters>) => void;
  clearFilters: () => void;
  /** Plain click selects one; `additive` (Ctrl/Cmd) toggles; `range` (Shift) extends from the anchor. */
  select: (index: number, mode?: { additive?: boolean; range?: boolean }) => void;
  toggleSelected: (id: string) => void;
  selectAll: () => void;
  clearSelection: () => void;
  open: (id: string | null) => void;
  /** Opens an item by id, fetching it when it is not on a loaded page (a variation's source, a job's result). */
  openById: (id: string) => Promise<void>;
  /** Replaces items main reports as changed. */
  refreshItems: (ids: string[]) => Promise<void>;
  setFavourite: (ids: string[], favourite: boolean) => Promise<void>;
  download: (ids: string[]) => Promise<void>;
  /** Downloads one item anew although a copy is on disk, and reports where it went or why it could not. */
  downloadAgain: (id: string) => Promise<void>;
  reveal: (id: string) => Promise<void>;
  retain: (id: string) => Promise<void>;
  exportAs: (id: string, format: ExportFormat) => Promise<LocalFile | null>;
  useLastFrame: (id: string) => Promise<LocalFile | null>;
  setPlayerMuted: (muted: boolean) => void;
  reset: () => void;
}

export type LibraryStore = LibraryState & LibraryActions;

export const useLibrary = create<LibraryStore>()((set, get) => {
  let inflight: Promise<void> | null = null;

  async function fetchPage(
    cursor: string | null,
  ): Promise<{ items: LibraryItem[]; total: number; nextCursor: string | null }> {
    const { filters } = get();
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

  function patchItems(update: (entry: LibraryItem) => LibraryItem | null): void {
    set((s) => ({ items: s.items.map((e) => update(e) ?? e) }));
  }

  async function busy<T>(id: string, label: string, title: string, run: () => Promise<T>): Promise<T | null> {
    set((s) => ({ busy: { ...s.busy, [id]: label } }));
    try {
      return await run();
    } catch (error) {
      toastError(title, error);
      return null;
    } finally {
      set((s) => {
        const { [id]: _done, ...rest } = s.busy;
        return { busy: rest };
      });
    }
  }

  return {
    ...initialState,
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
        const page = await fetchPage(null);
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
      const run = (async () => {
        try {
          const page = await fetchPage(nextCursor);
          if (get().generation !== generation) return;
          set((s) => ({ items: [...s.items, ...page.items], total: page.total, nextCursor: page.nextCursor }));
        } catch (error) {
          if (get().generation === generation) toastError('Could not load more of the library', error);
          set({ nextCursor: null });
        } finally {
          if (get().generation === generation) set({ loadingMore: false });
          inflight = null;
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
      set((s) => ({ filters: { ...defaultFilters, publicFeed: s.filters.publicFeed } }));
      void get().reload();
    },
    select(index, mode = {}) {
      const { items, anchor, selected } = get();
      const entry = items[index];
      if (!entry) return;
      const id = entry.item.id;
      if (mode.range && anchor !== null) {
        const [from, to] = anchor < index ? [anchor, index] : [index, anchor];
        const next: Record<string, true> = mode.additive ? { ...selected } : {};
        for (let i = from; i <= to; i++) {
          const e = items[i];
          if (e) next[e.item.id] = true;
        }
        set({ selected: next });
        return;
      }
      if (mode.additive) {
        const next = { ...selected };
        if (next[id]) delete next[id];
        else next[id] = true;
        set({ selected: next, anchor: index });
        return;
      }
      set({ selected: { [id]: true }, anchor: index, detailId: id });
    },
    toggleSelected(id) {
      const next = { ...get().selected };
      if (next[id]) delete next[id];
      else next[id] = true;
      const index = get().items.findIndex((e) => e.item.id === id);
      set({ selected: next, anchor: index >= 0 ? index : get().anchor });
    },
    selectAll() {
      set((s) => ({ selected: Object.fromEntries(s.items.map((e) => [e.item.id, true as const])) }));
    },
    clearSelection() {
      set({ selected: {}, anchor: null });
    },
    open(id) {
      set({ detailId: id });
    },
    async openById(id) {
      if (get().items.some((e) => e.item.id === id)) {
        set({ detailId: id });
        return;
      }
      try {
        const entry = await ipc().library.get({ id });
        set({ detailExtra: entry, detailId: id });
      } catch (error) {
        toastError('Could not open the item', error);
      }
    },
    async refreshItems(ids) {
      if (get().filters.publicFeed) return;
      const loaded = new Set(get().items.map((e) => e.item.id));
      const wanted = ids.filter((id) => loaded.has(id));
      const fresh = await Promise.all(
        wanted.map((id) =>
          ipc()
            .library.get({ id })
            .catch(() => null),
        ),
      );
      const byId = new Map(fresh.filter((e): e is LibraryItem => e !== null).map((e) => [e.item.id, e]));
      if (byId.size > 0) patchItems((e) => byId.get(e.item.id) ?? null);
    },
    async setFavourite(ids, favourite) {
      if (ids.length === 0) return;
      const set_ = new Set(ids);
      patchItems((e) => (set_.has(e.item.id) ? { ...e, favourite } : null));
      try {
        await ipc().library.setFavourite({ ids, favourite });
      } catch (error) {
        patchItems((e) => (set_.has(e.item.id) ? { ...e, favourite: !favourite } : null));
        toastError(favourite ? 'Could not add to favourites' : 'Could not remove from favourites', error);
      }
    },
    async download(ids) {
      if (ids.length === 0) return;
      const label = ids.length === 1 ? ids[0]! : 'bulk';
      await busy(label, 'Downloading…', 'Download failed', async () => {
        const res = await ipc().library.download({ ids });
        const parts = [];
        if (res.queued.length) parts.push(`${res.queued.length} downloading`);
        if (res.present.length) parts.push(`${res.present.length} already on disk`);
        toastSuccess(ids.length === 1 ? 'Download started' : `Downloading ${ids.length} items`, parts.join(', '));
      });
    },
    async downloadAgain(id) {
      await busy(id, 'Downloading again…', 'Could not download again', async () => {
        const entry = await ipc().library.downloadAgain({ id });
        patchItems((e) => (e.item.id === id ? entry : null));
        if (get().detailExtra?.item.id === id) set({ detailExtra: entry });
        toastSuccess('Downloaded again', entry.localPath ?? '');
      });
    },
    async reveal(id) {
      await busy(id, 'Revealing…', 'Could not reveal the file', async () => {
        const res = await ipc().library.reveal({ id });
        if (!res.revealed) toastSuccess('Saved at', res.path);
      });
    },
    async retain(id) {
      await busy(id, 'Extending…', 'Could not extend retention', async () => {
        const entry = await ipc().library.retain({ id, forever: true });
        patchItems((e) => (e.item.id === id ? entry : null));
        toastSuccess('Kept for good', 'The service will not delete this item.');
      });
    },
    exportAs(id, format) {
      return busy(id, `Exporting ${format.toUpperCase()}…`, `Export to ${format} failed`, async () => {
        const file = await ipc().library.export({ id, format });
        toastSuccess('Export ready', file.path);
        return file;
      });
    },
    useLastFrame(id) {
      return busy(id, 'Extracting last frame…', 'Could not extract the last frame', () =>
        ipc().library.useLastFrame({ id }),
      );
    },
    setPlayerMuted(muted) {
      set({ playerMuted: muted });
    },
    reset() {
      inflight = null;
      set(initialState);
    },
  };
});

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
