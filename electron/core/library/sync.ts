import type { MediaItem, MediaListQueryInput } from '../../../shared/api/index.ts';
import { MEDIA_LIST_MAX_LIMIT } from '../../../shared/api/index.ts';
import type { LibraryStore } from './store.ts';

type MediaPage = Awaited<ReturnType<MediaSource['listMedia']>>;

/** The part of the service client the library needs (ApiClient satisfies it). */
export interface MediaSource {
  listMedia(
    query?: MediaListQueryInput,
    options?: { signal?: AbortSignal },
  ): Promise<{ total: number; medias: MediaItem[] }>;
}

export interface SyncResult {
  kind: 'full' | 'incremental';
  requests: number;
  /** Items new to the index. */
  added: number;
  /** Items already in the index that the service now describes differently (or lists again after they were marked lost). */
  updated: number;
  /** Items a full reconcile found deleted on the service (now marked lost). */
  lost: string[];
}

export interface LibrarySyncOptions {
  store: LibraryStore;
  source: MediaSource;
  pageSize?: number;
  /** Called with each result (the UI refreshes; the guard re-checks deadlines). */
  onSynced?: (result: SyncResult) => void;
}

export interface LibrarySync {
  /** The first sync pages through everything; later ones fetch newest pages until known items. */
  sync(signal?: AbortSignal): Promise<SyncResult>;
  /** Pages through everything and marks what the service no longer lists as lost. */
  reconcile(signal?: AbortSignal): Promise<SyncResult>;
  /** True once a full pass has completed. */
  hasFullSync(): boolean;
}

const FULL_DONE = 'full_sync_done';
/** Items a full pass gathers before writing them in one transaction. */
const FULL_BATCH_ITEMS = 1000;
/**
 * Pages a full pass has requested and not yet taken. One is not enough: the client resolves a page
 * only after parsing and validating it, so with one the service idles while we validate and write.
 * With two it prepares the following page meanwhile. Pages are still requested only after a full
 * page arrived, and the second only while the service's total says it exists.
 */
const LOOKAHEAD_PAGES = 2;

export function createLibrarySync({
  store,
  source,
  pageSize = MEDIA_LIST_MAX_LIMIT,
  onSynced,
}: LibrarySyncOptions): LibrarySync {
  const limit = Math.min(MEDIA_LIST_MAX_LIMIT, pageSize);
  // One pass at a time: a reconcile's seen-marks must not mix with an incremental pass.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  const page = (n: number, signal?: AbortSignal) =>
    source.listMedia({ user: 'me', sort: 'newest', limit, page: n }, { signal });

  async function full(signal?: AbortSignal): Promise<SyncResult> {
    const mark = store.seenMark() + 1;
    let requests = 0;
    let seen = 0;
    let total: number;
    let added = 0;
    let updated = 0;
    let lost: string[];
    // Newest first: retention deletes the oldest, which only shortens the tail, so no page shifts
    // under us; new items shift pages the other way and only cause repeats.
    // Pages are requested ahead (see LOOKAHEAD_PAGES), so the service works while we validate and
    // index; the requests still stop where a one-at-a-time loop stops, at the first short page.
    const ahead = new AbortController();
    const pageSignal = signal ? AbortSignal.any([signal, ahead.signal]) : ahead.signal;
    const inFlight: Promise<MediaPage>[] = [];
    let next = 0;
    const request = (): void => {
      const pending = page(next++, pageSignal);
      // Awaited in turn; this only keeps a failure from counting as unhandled meanwhile.
      pending.catch(() => undefined);
      inFlight.push(pending);
      requests++;
    };
    // Nothing can have been deleted on the service since we last saw it if we never saw anything:
    // this also spares a first sync the scan for unseen rows, and an item another writer indexes
    // during the pass (a finished job's result, newer than the pages already fetched) is not lost.
    const startedEmpty = store.isEmpty();
    // The first full sync indexes the prompts for search once at the end instead of row by row.
    if (store.getMeta(FULL_DONE) === null) store.deferSearchIndex();
    // Several pages per transaction: each commit rewrites the id index's pages touched since the last one.
    let batch: MediaItem[] = [];
    try {
      request();
      for (;;) {
        const res = await inFlight.shift()!;
        total = res.total;
        const more = res.medias.length >= limit;
        // The next page always (the short page ends the pass); one more only while the service's
        // total says it holds items, so a pass that ends on a full page asks for nothing extra.
        if (more)
          while (inFlight.length < LOOKAHEAD_PAGES && (inFlight.length === 0 || next * limit < total)) request();
        batch.push(...res.medias);
        seen += res.medias.length;
        if (batch.length >= FULL_BATCH_ITEMS || !more) {
          // Let the next requests reach the socket before the synchronous write holds the thread.
          if (more) await new Promise((resolve) => setImmediate(resolve));
          const written = store.upsert(batch, mark);
          added += written.inserted;
          updated += written.updated;
          batch = [];
        }
        if (!more) break;
      }
      store.setMeta('seen_mark', String(mark));
      // An empty answer for a non-empty account means something is off; never mark everything lost on it.
      lost = startedEmpty || (seen === 0 && total > 0) ? [] : store.markUnseenLost(mark);
      store.setMeta(FULL_DONE, '1');
    } finally {
      // A page still in flight after a failure (or past a total that shrank) is not wanted.
      ahead.abort();
      // Also after a failure: what was written is searchable, and the next pass starts from it.
      store.buildSearchIndex();
    }
    return { kind: 'full', requests, added, updated, lost };
  }

  async function incremental(signal?: AbortSignal): Promise<SyncResult> {
    let requests = 0;
    let added = 0;
    let updated = 0;
    for (let n = 0; ; n++) {
      const res = await page(n, signal);
      requests++;
      const written = store.upsert(res.medias);
      added += written.inserted;
      updated += written.updated;
      if (written.known.size > 0 || res.medias.length < limit) break;
    }
    return { kind: 'incremental', requests, added, updated, lost: [] };
  }

  const report = (r: SyncResult): SyncResult => {
    onSynced?.(r);
    return r;
  };

  return {
    sync: (signal) =>
      serial(async () => report(store.getMeta(FULL_DONE) ? await incremental(signal) : await full(signal))),
    reconcile: (signal) => serial(async () => report(await full(signal))),
    hasFullSync: () => store.getMeta(FULL_DONE) !== null,
  };
}
