import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../../shared/clock.ts';
import { countMatching } from '../../../../../electron/core/library/counts.ts';
import {
  buildLibraryQuery,
  createLibraryStore,
  createLibrarySync,
  createRetentionGuard,
  ftsQuery,
  openDatabase,
  retentionDeadline,
} from '../../../../../electron/core/library/index.ts';
import type { LibraryItem, RetentionEvent, RetentionPolicy } from '../../../../../electron/core/library/index.ts';
import type { MediaItem, MediaListQueryInput } from '../../../../../shared/api/index.ts';
import { FakeMediaSource, item } from './fake-media.ts';
import { ServiceError } from '../../../../../electron/core/api/index.ts';

const DAY = 86_400_000;

function setup(retentionDays = 7) {
  const clock = new ManualClock(Date.UTC(2026, 0, 10));
  const store = createLibraryStore({
    db: openDatabase(':memory:'),
    now: () => clock.now(),
    retentionDays: () => retentionDays,
  });
  const source = new FakeMediaSource();
  const sync = createLibrarySync({ store, source, pageSize: 10 });
  return { clock, store, source, sync };
}

describe('retention deadline', () => {
  it('uses expiresAt, null when exempt, else createdAt + the tier retention', () => {
    const created = '2026-01-01T00:00:00.000Z';
    expect(retentionDeadline({ createdAt: created, expiresAt: '2026-01-03T00:00:00.000Z' }, 7)).toBe(
      Date.UTC(2026, 0, 3),
    );
    expect(retentionDeadline({ createdAt: created, expiresAt: null }, 7)).toBeNull();
    expect(retentionDeadline({ createdAt: created, downloadedAt: '2026-01-02T00:00:00.000Z' }, 7)).toBeNull();
    expect(retentionDeadline({ createdAt: created }, 30)).toBe(Date.UTC(2026, 0, 31));
  });
});

describe('library sync', () => {
  it('pages through everything first, then fetches only until known items', async () => {
    const { store, source, sync } = setup();
    source.add(35, Date.UTC(2026, 0, 1));
    const first = await sync.sync();
    expect(first).toMatchObject({ kind: 'full', requests: 4, added: 35 });
    expect(store.count()).toBe(35);
    expect(source.requests.every((q) => q.user === 'me' && q.sort === 'newest')).toBe(true);

    const nothing = await sync.sync();
    expect(nothing).toMatchObject({ kind: 'incremental', requests: 1, added: 0 });

    source.add(12, Date.UTC(2026, 0, 5));
    const some = await sync.sync();
    expect(some).toMatchObject({ kind: 'incremental', requests: 2, added: 12 });
    expect(store.count()).toBe(47);
  });

  it('marks items the service deleted as lost on a reconcile, and keeps local metadata', async () => {
    const { store, source, sync } = setup();
    const made = source.add(15, Date.UTC(2026, 0, 1));
    await sync.sync();
    store.setFavourite(made[0]!.id, true);
    source.remove([made[0]!.id, made[1]!.id]);
    expect((await sync.sync()).lost).toEqual([]);
    const r = await sync.reconcile();
    expect(r.lost.sort()).toEqual([made[0]!.id, made[1]!.id].sort());
    const lost = store.get(made[0]!.id)!;
    expect(lost.lostAt).not.toBeNull();
    expect(lost.favourite).toBe(true);
    expect(store.query({ includeLost: false }).items).toHaveLength(13);
    // Nothing else is lost on the next pass.
    expect((await sync.reconcile()).lost).toEqual([]);
  });

  it('builds the search index of a first sync once at the end, and keeps it current afterwards', async () => {
    const { store, source, sync } = setup();
    source.add(25, Date.UTC(2026, 0, 1), { prompt: 'red fox at dawn' });
    source.add(5, Date.UTC(2026, 0, 2), { prompt: 'blue whale' });
    expect(await sync.sync()).toMatchObject({ kind: 'full', added: 30 });
    expect(store.query({ search: 'fox', limit: 100 }).items).toHaveLength(25);
    expect(store.query({ search: 'whale' }).items).toHaveLength(5);
    // Incremental passes index row by row again.
    source.add(2, Date.UTC(2026, 0, 3), { prompt: 'a fox cub' });
    await sync.sync();
    expect(store.query({ search: 'cub' }).items).toHaveLength(2);
    expect(store.query({ search: 'fox', limit: 100 }).items).toHaveLength(27);
  });

  it('builds the search index on the next open when a first sync died before building it', () => {
    const { store } = setup();
    store.deferSearchIndex();
    store.upsert([item('a', Date.UTC(2026, 0, 1), { prompt: 'red fox' })]);
    expect(store.query({ search: 'fox' }).items).toHaveLength(0);
    const reopened = createLibraryStore({ db: store.db, now: () => Date.now(), retentionDays: () => 7 });
    expect(reopened.query({ search: 'fox' }).items.map((i) => i.item.id)).toEqual(['a']);
    reopened.upsert([item('b', Date.UTC(2026, 0, 2), { prompt: 'grey fox' })]);
    expect(reopened.query({ search: 'fox' }).items).toHaveLength(2);
  });

  it('counts existing items the service changed as updated', async () => {
    const { source, sync, store } = setup();
    const made = source.add(15, Date.UTC(2026, 0, 1));
    expect(await sync.sync()).toMatchObject({ added: 15, updated: 0 });
    // The newest item got retained for good; everything else is as it was.
    source.items = source.items.map((i) => (i.id === made[14]!.id ? { ...i, expiresAt: null } : i));
    expect(await sync.sync()).toMatchObject({ kind: 'incremental', added: 0, updated: 1 });
    expect(store.get(made[14]!.id)?.deadline).toBeNull();
    expect(await sync.sync()).toMatchObject({ added: 0, updated: 0 });
    source.items = source.items.map((i) => (i.id === made[0]!.id ? { ...i, prompt: 'renamed fox' } : i));
    expect(await sync.reconcile()).toMatchObject({ kind: 'full', added: 0, updated: 1, lost: [] });
    expect(store.query({ search: 'renamed' }).items.map((i) => i.item.id)).toEqual([made[0]!.id]);
    expect(store.get(made[0]!.id)?.item).toEqual(source.items.find((i) => i.id === made[0]!.id));
  });

  it('a first sync into an empty index marks nothing lost, not even an item indexed during the pass', async () => {
    const { store, source, sync } = setup();
    source.add(25, Date.UTC(2026, 0, 1));
    const listMedia = source.listMedia.bind(source);
    source.listMedia = (q) => {
      // A generation finishes while the pass is past the newest page; its job indexes the result.
      if (q?.page === 1 && !store.get('fresh')) store.upsert([item('fresh', Date.UTC(2026, 0, 9))]);
      return listMedia(q);
    };
    expect(await sync.sync()).toMatchObject({ kind: 'full', added: 25, lost: [] });
    expect(store.get('fresh')?.lostAt).toBeNull();
  });

  it('never marks everything lost on an empty answer for a non-empty account', async () => {
    const { store, sync, source } = setup();
    source.add(3, Date.UTC(2026, 0, 1));
    await sync.sync();
    source.listMedia = () => Promise.resolve({ total: 3, medias: [] });
    expect((await sync.reconcile()).lost).toEqual([]);
    expect(store.query({ includeLost: false }).items).toHaveLength(3);
  });
});

describe('first full sync pipelining', () => {
  /** A source whose answers wait until released, so a test sees what is in flight while the sync writes. */
  class GatedSource extends FakeMediaSource {
    inFlight = 0;
    maxInFlight = 0;
    signals: (AbortSignal | undefined)[] = [];
    failPage: number | null = null;
    override listMedia(query: MediaListQueryInput = {}, options?: { signal?: AbortSignal }) {
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      this.signals.push(options?.signal);
      const answer = super.listMedia(query);
      return new Promise<{ total: number; medias: MediaItem[] }>((resolve, reject) =>
        setTimeout(() => {
          this.inFlight--;
          if (query.page === this.failPage) reject(new Error(`page ${query.page} failed`));
          else resolve(answer);
        }, 1),
      );
    }
  }

  it('keeps the next two pages in flight and asks for no page the service does not list', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 10));
    const store = createLibraryStore({ db: openDatabase(':memory:'), now: () => clock.now(), retentionDays: () => 7 });
    const source = new GatedSource();
    source.add(95, Date.UTC(2026, 0, 1));
    const sync = createLibrarySync({ store, source, pageSize: 10 });
    // 9 full pages and a short one: the same 10 requests a one-at-a-time loop makes.
    expect(await sync.sync()).toMatchObject({ kind: 'full', requests: 10, added: 95 });
    expect(source.requests.map((q) => q.page)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(source.maxInFlight).toBe(2);
    expect(store.count()).toBe(95);

    // An exact multiple of the page size ends on an empty page, as the one-at-a-time loop does.
    const exact = new GatedSource();
    exact.add(30, Date.UTC(2026, 0, 1));
    const store2 = createLibraryStore({ db: openDatabase(':memory:'), now: () => clock.now(), retentionDays: () => 7 });
    expect(await createLibrarySync({ store: store2, source: exact, pageSize: 10 }).sync()).toMatchObject({
      requests: 4,
      added: 30,
    });
    expect(exact.requests.map((q) => q.page)).toEqual([0, 1, 2, 3]);
  });

  it('fails with the failed page, cancels the page still in flight, and the next sync completes the index', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 10));
    const store = createLibraryStore({ db: openDatabase(':memory:'), now: () => clock.now(), retentionDays: () => 7 });
    const source = new GatedSource();
    source.add(50, Date.UTC(2026, 0, 1), { prompt: 'red fox' });
    source.failPage = 2;
    const sync = createLibrarySync({ store, source, pageSize: 10 });
    await expect(sync.sync()).rejects.toThrow('page 2 failed');
    // Page 3 was requested alongside page 2; its request is cancelled, not left running.
    expect(source.requests.map((q) => q.page)).toEqual([0, 1, 2, 3]);
    expect(source.signals[3]?.aborted).toBe(true);
    // Nothing was marked done, and search upkeep is back to row by row.
    expect(sync.hasFullSync()).toBe(false);
    store.upsert([item('x', Date.UTC(2026, 0, 2), { prompt: 'grey fox' })]);
    expect(store.query({ search: 'grey' }).items).toHaveLength(1);
    source.failPage = null;
    expect(await sync.sync()).toMatchObject({ kind: 'full', added: 50, lost: ['x'] });
    expect(store.query({ search: 'fox', limit: 100, includeLost: false }).items).toHaveLength(50);
  });

  it('checkpoints the WAL once at the end of a first sync and restores the usual checkpoint interval', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clipdesk-library-wal-'));
    try {
      const db = openDatabase(join(dir, 'library.db'));
      const interval = (): unknown =>
        (db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
      const usual = interval();
      const store = createLibraryStore({ db, now: () => Date.UTC(2026, 0, 10), retentionDays: () => 7 });
      const source = new FakeMediaSource();
      source.add(25, Date.UTC(2026, 0, 1));
      const during: unknown[] = [];
      const listMedia = source.listMedia.bind(source);
      source.listMedia = (q) => (during.push(interval()), listMedia(q));
      await createLibrarySync({ store, source, pageSize: 10 }).sync();
      // Fewer checkpoints while it loads; back to the usual interval after.
      expect(during.every((n) => typeof n === 'number' && n > (usual as number))).toBe(true);
      expect(interval()).toBe(usual);
      // Everything the sync wrote is already in the database file, not only in the WAL.
      const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
      const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
      expect(statSync(join(dir, 'library.db')).size).toBe(pages * pageSize);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('library queries', () => {
  function seeded() {
    const s = setup();
    const base = Date.UTC(2026, 0, 1);
    s.store.upsert([
      item('a', base + 1, { prompt: 'A red fox jumps over the café', media: 'video', size: '720p' }),
      item('b', base + 2, {
        prompt: 'blue ocean waves at dusk',
        media: 'video',
        model: 'clipdesk/drift',
        modelSlug: 'clipdesk/drift:2.0',
      }),
      item('c', base + 3, {
        prompt: 'a fox portrait',
        media: 'image',
        size: '512x512',
        model: 'clipdesk/still',
        modelSlug: 'clipdesk/still:1.0',
      }),
      item('d', base + 4, {
        prompt: 'foxes "quoted" OR NOT',
        provider: 'local-fine',
        providerName: 'Local Fine',
        expiresAt: new Date(base + 2 * DAY).toISOString(),
      }),
      item('e', base + 5, { prompt: 'city lights', expiresAt: null }),
    ]);
    return s;
  }
  const ids = (items: LibraryItem[]): string[] => items.map((i) => i.item.id);

  it('filters by the spec filters and searches the prompt with FTS', () => {
    const { store } = seeded();
    expect(ids(store.query().items)).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect(ids(store.query({ sort: 'oldest' }).items)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(ids(store.query({ media: 'image' }).items)).toEqual(['c']);
    expect(ids(store.query({ size: '720P' }).items)).toEqual(['a']);
    expect(ids(store.query({ model: 'clipdesk/drift' }).items)).toEqual(['b']);
    expect(ids(store.query({ model: 'clipdesk/drift:2.0' }).items)).toEqual(['b']);
    expect(ids(store.query({ provider: 'local fine' }).items)).toEqual(['d']);
    expect(ids(store.query({ search: 'fox' }).items)).toEqual(['d', 'c', 'a']);
    expect(ids(store.query({ search: 'cafe' }).items)).toEqual(['a']);
    expect(ids(store.query({ search: 'fox', media: 'video' }).items)).toEqual(['d', 'a']);
    expect(ids(store.query({ search: '"quoted" OR NOT (' }).items)).toEqual(['d']);
    expect(ids(store.query({ search: '   ' }).items)).toHaveLength(5);
  });

  it('filters by downloaded, favourite, expiring and collection', () => {
    const { store, clock } = seeded();
    store.markDownloaded('b', '/tmp/b.mp4');
    store.setFavourite('c', true);
    expect(ids(store.query({ downloaded: true }).items)).toEqual(['b']);
    expect(ids(store.query({ downloaded: false }).items)).toEqual(['e', 'd', 'c', 'a']);
    expect(ids(store.query({ favourite: true }).items)).toEqual(['c']);
    clock.set(Date.UTC(2026, 0, 1));
    expect(ids(store.query({ expiringWithinMs: 3 * DAY }).items)).toEqual(['d']);
    // b is downloaded, so kept: whatever deadline the index last saw, it is not expiring.
    expect(ids(store.query({ expiringWithinMs: 8 * DAY }).items)).toEqual(['d', 'c', 'a']);
    const col = store.createCollection('  Foxes ');
    store.addToCollection(col.id, ['a', 'c', 'c']);
    expect(store.collections()).toEqual([{ id: col.id, name: 'Foxes', createdAt: col.createdAt, size: 2 }]);
    expect(ids(store.query({ collection: col.id }).items)).toEqual(['c', 'a']);
    store.removeFromCollection(col.id, ['a']);
    expect(ids(store.query({ collection: col.id }).items)).toEqual(['c']);
    store.deleteCollection(col.id);
    expect(store.collections()).toEqual([]);
  });

  it('keeps uploads and extracted frames apart from the takes, and counts each', () => {
    const { store } = seeded();
    store.upsert([
      item('u', Date.UTC(2026, 0, 1) + 6, {
        prompt: '',
        media: 'image',
        model: 'upload/file',
        modelSlug: 'upload/file',
      }),
    ]);
    expect(ids(store.query().items)).toEqual(['u', 'e', 'd', 'c', 'b', 'a']);
    expect(ids(store.query({ origin: 'inputs' }).items)).toEqual(['u']);
    expect(countMatching(store.db, { origin: 'inputs' }, 0)).toBe(1);
    expect(ids(store.query({ origin: 'takes' }).items)).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect(countMatching(store.db, { origin: 'takes' }, 0)).toBe(5);
    expect(ids(store.query({ origin: 'takes', search: 'fox' }).items)).toEqual(['d', 'c', 'a']);
  });

  it('pages by keyset, stable when items arrive between pages', () => {
    const { store } = setup();
    const base = Date.UTC(2026, 0, 1);
    // Equal timestamps: the id breaks ties.
    store.upsert(
      Array.from({ length: 25 }, (_, i) => item(`x${String(i).padStart(2, '0')}`, base + Math.floor(i / 2))),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = store.query({ limit: 10, cursor });
      seen.push(...ids(page.items));
      cursor = page.nextCursor;
      if (pages++ === 0) store.upsert([item('newest', base + 10_000)]);
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(seen).not.toContain('newest');
  });

  it('builds safe FTS queries', () => {
    expect(ftsQuery('fox "x" AND')).toBe('"fox"* "x"* "AND"*');
    expect(ftsQuery('!!')).toBeNull();
    expect(buildLibraryQuery({ limit: 100000 }, 0).limit).toBe(500);
  });
});

describe('retention guard', () => {
  function guarded(policy: RetentionPolicy, fail: (id: string) => Error | null = () => null) {
    const s = setup();
    const base = s.clock.now();
    s.store.upsert([
      item('soon', base - 6 * DAY), // 7-day retention: deadline in 1 day
      item('later', base - 2 * DAY), // deadline in 5 days
      item('fav', base - 6.5 * DAY), // deadline in 12 hours
      item('kept', base - 6.9 * DAY, { expiresAt: null }),
    ]);
    s.store.setFavourite('fav', true);
    const events: RetentionEvent[] = [];
    const downloaded: string[] = [];
    const guard = createRetentionGuard({
      store: s.store,
      now: () => s.clock.now(),
      policy: () => policy,
      marginMs: 2 * DAY,
      warnBeforeMs: 3 * DAY,
      onEvent: (e) => events.push(e),
      downloader: {
        download(entry) {
          const error = fail(entry.item.id);
          if (error) return Promise.reject(error);
          downloaded.push(entry.item.id);
          return Promise.resolve({ path: `/saved/${entry.item.id}.mp4` });
        },
      },
    });
    return { ...s, guard, events, downloaded };
  }

  it('everything: downloads what is due within the margin, soonest first', async () => {
    const g = guarded('everything');
    const r = await g.guard.tick();
    expect(r.saved).toEqual(['fav', 'soon']);
    expect(g.store.get('soon')?.downloadedPath).toBe('/saved/soon.mp4');
    expect(r.warned).toEqual([]);
    g.clock.advance(3.5 * DAY);
    expect((await g.guard.tick()).saved).toEqual(['later']);
  });

  it('favourites: downloads only favourites and warns about the rest, once', async () => {
    const g = guarded('favourites');
    const r = await g.guard.tick();
    expect(r.saved).toEqual(['fav']);
    expect(r.warned).toEqual(['soon']);
    expect(g.events.filter((e) => e.type === 'warning').map((e) => e.id)).toEqual(['soon']);
    expect((await g.guard.tick()).warned).toEqual([]);
  });

  it('off: downloads nothing but still warns', async () => {
    const g = guarded('off');
    const r = await g.guard.tick();
    expect(r.saved).toEqual([]);
    expect(r.warned).toEqual(['fav', 'soon']);
    expect(g.downloaded).toEqual([]);
  });

  it('marks an item lost when the service already deleted it, and carries on after other failures', async () => {
    const g = guarded('everything', (id) =>
      id === 'fav' ? new ServiceError('not_found_error', 'gone') : id === 'soon' ? new Error('disk full') : null,
    );
    const r = await g.guard.tick();
    expect(r).toMatchObject({ saved: [], lost: ['fav'], failed: ['soon'] });
    expect(g.store.get('fav')?.lostAt).not.toBeNull();
    expect(g.events.find((e) => e.type === 'failed')).toMatchObject({ id: 'soon', message: 'disk full' });
    // Lost items are not tried again; failed ones are.
    const again = await g.guard.tick();
    expect(again.lost).toEqual([]);
    expect(again.failed).toEqual(['soon']);
  });

  it('never throws, even when the index is closed', async () => {
    const g = guarded('everything');
    g.store.db.close();
    const r = await g.guard.tick();
    expect(r.saved).toEqual([]);
    expect(g.events.at(-1)?.type).toBe('failed');
  });
});
