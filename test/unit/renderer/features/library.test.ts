import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { defaultFilters } from '../../../../renderer/src/stores/library/initialState.ts';
import {
  activeFilterCount,
  feedQuery,
  libraryQuery,
  playableUrl,
  selectedIds,
  thumbnailUrl,
} from '../../../../renderer/src/stores/library/selectors.ts';
import { useToasts } from '../../../../renderer/src/stores/toasts/index.ts';
import { IpcError } from '../../../../renderer/src/lib/ipc.ts';
import { installFakeIpc, libraryItem, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
const page = (from: number, n: number, total: number, next: string | null) => ({
  items: Array.from({ length: n }, (_, i) => libraryItem(from + i)),
  total,
  nextCursor: next,
});

beforeEach(() => {
  ipc = installFakeIpc();
  useLibrary.getState().reset();
  useToasts.getState().reset();
});

describe('library selectors', () => {
  it('maps filters to the query: only what is set', () => {
    expect(libraryQuery(defaultFilters, null)).toEqual({ sort: 'newest', limit: 500, origin: 'takes' });
    expect(
      libraryQuery(
        {
          ...defaultFilters,
          media: 'video',
          model: 'local/waves',
          search: ' cat ',
          downloaded: true,
          favourite: true,
          expiringSoon: true,
          sort: 'oldest',
          origin: 'inputs',
        },
        'c1',
      ),
    ).toEqual({
      sort: 'oldest',
      limit: 500,
      origin: 'inputs',
      media: 'video',
      model: 'local/waves',
      search: 'cat',
      downloaded: true,
      favourite: true,
      expiringWithinHours: 72,
      cursor: 'c1',
    });
    expect(feedQuery({ ...defaultFilters, provider: 'p1' }, 2)).toEqual({
      sort: 'newest',
      limit: 100,
      page: 2,
      provider: 'p1',
    });
    expect(activeFilterCount({ ...defaultFilters, media: 'image', favourite: true })).toBe(2);
  });
  it('thumbnails and playback URLs', () => {
    const e = libraryItem(1);
    expect(thumbnailUrl(e)).toBe('http://127.0.0.1:1/media/m_1.jpg');
    expect(playableUrl(e)).toBe(e.item.url);
    expect(playableUrl({ ...e, localUrl: '/local-media/x.mp4' })).toBe('/local-media/x.mp4');
  });
});

describe('library store', () => {
  it('loads page by page as the grid asks, with the cursor', async () => {
    ipc.library.query
      .mockResolvedValueOnce(page(0, 500, 1200, 'c1'))
      .mockResolvedValueOnce(page(500, 500, 1200, 'c2'))
      .mockResolvedValueOnce(page(1000, 200, 1200, null));
    await useLibrary.getState().reload();
    expect(useLibrary.getState().items).toHaveLength(500);
    await useLibrary.getState().ensureLoaded(1100);
    expect(useLibrary.getState().items).toHaveLength(1200);
    expect(ipc.library.query.mock.calls.map((c) => (c[0] as { cursor?: string }).cursor)).toEqual([
      undefined,
      'c1',
      'c2',
    ]);
    await useLibrary.getState().loadMore();
    expect(ipc.library.query).toHaveBeenCalledTimes(3);
  });
  it('a refresh (sync, new item) keeps what was loaded below the first page, so a deep scroll stays filled', async () => {
    ipc.library.query
      .mockResolvedValueOnce(page(0, 500, 1200, 'c1'))
      .mockResolvedValueOnce(page(500, 500, 1200, 'c2'))
      .mockResolvedValueOnce(page(1000, 200, 1200, null));
    await useLibrary.getState().reload();
    await useLibrary.getState().ensureLoaded(1100);
    // One new item on top: the fresh first page ends at m_498, which was already loaded.
    ipc.library.query.mockResolvedValueOnce({
      items: [libraryItem(-1), ...page(0, 499, 1201, 'x').items],
      total: 1201,
      nextCursor: 'x',
    });
    await useLibrary.getState().reload({ keepLoaded: true });
    const s = useLibrary.getState();
    expect(s.items.map((e) => e.item.id).slice(0, 3)).toEqual(['m_-1', 'm_0', 'm_1']);
    expect(s.items).toHaveLength(1201);
    expect(new Set(s.items.map((e) => e.item.id)).size).toBe(1201);
    expect(s.items[1200]!.item.id).toBe('m_1199');
    expect(s.total).toBe(1201);
    expect(s.nextCursor).toBeNull();
    expect(ipc.library.query).toHaveBeenCalledTimes(4);
  });
  it('a refresh whose first page shares nothing with what was loaded starts over from it', async () => {
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1')).mockResolvedValueOnce(page(500, 500, 1200, 'c2'));
    await useLibrary.getState().reload();
    await useLibrary.getState().ensureLoaded(600);
    ipc.library.query.mockResolvedValueOnce(page(5000, 500, 9000, 'n1'));
    await useLibrary.getState().reload({ keepLoaded: true });
    const s = useLibrary.getState();
    expect(s.items).toHaveLength(500);
    expect(s.items[0]!.item.id).toBe('m_5000');
    expect(s.nextCursor).toBe('n1');
  });
  it('a new filter is a new query: nothing loaded for the old one is kept, and the selection clears', async () => {
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1')).mockResolvedValueOnce(page(500, 500, 1200, 'c2'));
    await useLibrary.getState().reload();
    await useLibrary.getState().ensureLoaded(600);
    useLibrary.getState().select(3);
    // The filtered first page happens to end on an item loaded before; it must not splice.
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 700, 'f1'));
    useLibrary.getState().setFilters({ media: 'video' });
    await vi.waitFor(() => expect(useLibrary.getState().total).toBe(700));
    const s = useLibrary.getState();
    expect(s.items).toHaveLength(500);
    expect(s.nextCursor).toBe('f1');
    expect(s.selected).toEqual({});
  });
  it('a refresh while the grid is loading toward a deep scroll does not stop the loading', async () => {
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1'));
    await useLibrary.getState().reload();
    let answerC1: (v: unknown) => void = () => {};
    ipc.library.query.mockReturnValueOnce(new Promise((r) => (answerC1 = r)));
    const loading = useLibrary.getState().ensureLoaded(1100);
    await vi.waitFor(() => expect(ipc.library.query).toHaveBeenCalledTimes(2));
    // A sync lands meanwhile: the same first page again.
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1'));
    await useLibrary.getState().reload({ keepLoaded: true });
    answerC1(page(500, 500, 1200, 'c2'));
    ipc.library.query
      .mockResolvedValueOnce(page(500, 500, 1200, 'c2'))
      .mockResolvedValueOnce(page(1000, 200, 1200, null));
    await loading;
    const s = useLibrary.getState();
    expect(s.items).toHaveLength(1200);
    expect(new Set(s.items.map((e) => e.item.id)).size).toBe(1200);
    expect(s.nextCursor).toBeNull();
  });
  it('a page dropped by a refresh does not let a second copy of the next page be asked for', async () => {
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1'));
    await useLibrary.getState().reload();
    const held: Array<(v: unknown) => void> = [];
    const hold = (): Promise<unknown> => new Promise((r) => held.push(r));
    ipc.library.query.mockReturnValueOnce(hold());
    const dropped = useLibrary.getState().loadMore();
    // A sync lands while that page is on its way: the same first page again.
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1'));
    await useLibrary.getState().reload({ keepLoaded: true });
    ipc.library.query.mockReturnValueOnce(hold());
    const next = useLibrary.getState().loadMore();
    held[0]!(page(500, 500, 1200, 'c2'));
    await dropped;
    // The grid asks again while the refreshed query's page is still on its way: it waits for that
    // page rather than asking for the same one a second time.
    ipc.library.query.mockReturnValueOnce(hold());
    const again = useLibrary.getState().loadMore();
    expect(ipc.library.query).toHaveBeenCalledTimes(4);
    for (const answer of held.slice(1)) answer(page(500, 500, 1200, 'c2'));
    await Promise.all([next, again]);
    const s = useLibrary.getState();
    expect(s.items).toHaveLength(1000);
    expect(new Set(s.items.map((e) => e.item.id)).size).toBe(1000);
  });
  it('while the first page of a new filter is on its way, no page of the old query is loaded', async () => {
    ipc.library.query.mockResolvedValueOnce(page(0, 500, 1200, 'c1'));
    await useLibrary.getState().reload();
    let answerFiltered: (v: unknown) => void = () => {};
    ipc.library.query.mockReturnValueOnce(new Promise((r) => (answerFiltered = r)));
    useLibrary.getState().setFilters({ media: 'video' });
    // The grid, still showing the old items, scrolls on.
    await useLibrary.getState().ensureLoaded(600);
    expect(ipc.library.query).toHaveBeenCalledTimes(2);
    answerFiltered(page(0, 500, 700, 'f1'));
    await vi.waitFor(() => expect(useLibrary.getState().total).toBe(700));
    const s = useLibrary.getState();
    expect(s.items).toHaveLength(500);
    expect(s.nextCursor).toBe('f1');
  });
  it('drops an answer to an older query', async () => {
    let resolveFirst: (v: unknown) => void = () => {};
    ipc.library.query
      .mockReturnValueOnce(new Promise((r) => (resolveFirst = r)))
      .mockResolvedValueOnce(page(0, 1, 1, null));
    const first = useLibrary.getState().reload();
    useLibrary.getState().setFilters({ search: 'new' });
    await new Promise((r) => setTimeout(r, 0));
    resolveFirst(page(0, 5, 5, null));
    await first;
    expect(useLibrary.getState().total).toBe(1);
  });
  it('the public feed uses the service feed, page by page', async () => {
    ipc.library.feed.mockResolvedValue({ items: [libraryItem(1).item], total: 1, nextPage: null });
    useLibrary.getState().setFilters({ publicFeed: true });
    await new Promise((r) => setTimeout(r, 0));
    expect(ipc.library.feed).toHaveBeenCalledWith({ sort: 'newest', limit: 100, page: 0 });
    expect(useLibrary.getState().items[0]?.item.id).toBe('m_1');
    expect(useLibrary.getState().nextCursor).toBeNull();
  });
  it('the feed follows the page main says is next, past a page that came back empty', async () => {
    ipc.library.feed
      .mockResolvedValueOnce({ items: [libraryItem(1).item], total: 3, nextPage: 1 })
      .mockResolvedValueOnce({ items: [], total: 3, nextPage: 6 })
      .mockResolvedValueOnce({ items: [libraryItem(2).item, libraryItem(3).item], total: 3, nextPage: null });
    useLibrary.getState().setFilters({ publicFeed: true });
    await vi.waitFor(() => expect(useLibrary.getState().items).toHaveLength(1));
    await useLibrary.getState().ensureLoaded(2);
    expect(ipc.library.feed.mock.calls.map((c) => (c[0] as { page: number }).page)).toEqual([0, 1, 6]);
    expect(useLibrary.getState().items.map((e) => e.item.id)).toEqual(['m_1', 'm_2', 'm_3']);
    expect(useLibrary.getState().nextCursor).toBeNull();
  });
  it('selects with click, Ctrl-click and Shift-click', async () => {
    ipc.library.query.mockResolvedValue(page(0, 10, 10, null));
    await useLibrary.getState().reload();
    const lib = useLibrary.getState();
    lib.select(2);
    expect(selectedIds(useLibrary.getState())).toEqual(['m_2']);
    expect(useLibrary.getState().detailId).toBe('m_2');
    lib.select(5, { range: true });
    expect(selectedIds(useLibrary.getState()).sort()).toEqual(['m_2', 'm_3', 'm_4', 'm_5']);
    lib.select(8, { additive: true });
    expect(selectedIds(useLibrary.getState())).toContain('m_8');
    lib.selectAll();
    expect(selectedIds(useLibrary.getState())).toHaveLength(10);
    lib.clearSelection();
    expect(selectedIds(useLibrary.getState())).toEqual([]);
  });
  it('bulk favourite is optimistic and rolls back with the service message', async () => {
    ipc.library.query.mockResolvedValue(page(0, 3, 3, null));
    await useLibrary.getState().reload();
    ipc.library.setFavourite.mockRejectedValue(new IpcError({ code: 'internal_error', message: 'disk full' }));
    await useLibrary.getState().setFavourite(['m_0', 'm_1'], true);
    expect(useLibrary.getState().items.every((e) => !e.favourite)).toBe(true);
    expect(useToasts.getState().toasts[0]?.message).toBe('disk full');
    ipc.library.setFavourite.mockResolvedValue({ updated: 2 });
    await useLibrary.getState().setFavourite(['m_0', 'm_1'], true);
    expect(useLibrary.getState().items.map((e) => e.favourite)).toEqual([true, true, false]);
  });
  it('bulk download and export go through the contract', async () => {
    ipc.library.download.mockResolvedValue({ queued: ['m_0', 'm_1'], present: [] });
    await useLibrary.getState().download(['m_0', 'm_1']);
    expect(ipc.library.download).toHaveBeenCalledWith({ ids: ['m_0', 'm_1'] });
    ipc.library.export.mockResolvedValue({ path: '/d/x.gif', url: '/local-media/x.gif', mime: 'image/gif', bytes: 10 });
    expect(await useLibrary.getState().exportAs('m_0', 'gif')).toMatchObject({ mime: 'image/gif' });
    expect(useLibrary.getState().busy).toEqual({});
  });
});
