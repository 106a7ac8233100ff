import type { MediaItem, MediaListQueryInput } from '../../../shared/api/index.ts';
import { MEDIA_LIST_MAX_LIMIT } from '../../../shared/api/index.ts';
import type { LibraryStore } from './store.ts';

/** The part of the service client the library needs (ApiClient satisfies it). */
export interface MediaSource {
  listMedia(query?: MediaListQueryInput, options?: { signal?: AbortSignal }): Promise<{ total: number; medias: MediaItem[] }>;
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

export function createLibrarySync({ store, source, pageSize = MEDIA_LIST_MAX_LIMIT, onSynced }: LibrarySyncOptions): LibrarySync {
  const limit = Math.min(MEDIA_LIST_MAX_LIMIT, pageSize);
  // One pass at a time: a reconcile's seen-marks must not mix with an incremental pass.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  const page = (n: number, signal?: AbortSignal) => source.listMedia({ user: 'me', sort: 'newest', limit, page: n }, { signal });

  async function full(signal?: AbortSignal): Promise<SyncResult> {
    const mark = store.seenMark() + 1;
    let requests = 0;
    let seen = 0;
    let total: number;
    // Newest first: retention deletes the oldest, which only shortens the tail, so no page shifts
    // under us; new items shift pages the other way and only cause repeats. The next page is
    // requested before a batch is written, so the service works while we index.
    let added = 0;
    let updated = 0;
    // The first full sync indexes the prompts for search once at the end instead of row by row.
    if (store.getMeta(FULL_DONE) === null) store.deferSearchIndex();
    // Several pages per transaction: each commit rewrites the id index's pages touched since the last one.
    let batch: MediaItem[] = [];
    try {
      let pending = page(0, signal);
      for (let n = 0; ; n++) {
        const res = await pending;
        requests++;
        total = res.total;
        const more = res.medias.length >= limit;
        if (more) {
          pending = page(n + 1, signal);
          // Awaited on the next turn; this only keeps a failure from counting as unhandled meanwhile.
          pending.catch(() => undefined);
        }
        batch.push(...res.medias);
        seen += res.medias.length;
        if (batch.length >= FULL_BATCH_ITEMS || !more) {
          // Let the next request reach the socket before the synchronous write holds the thread.
          if (more) await new Promise((resolve) => setImmediate(resolve));
          const written = store.upsert(batch, mark);
          added += written.inserted;
          updated += written.updated;
          batch = [];
        }
        if (!more) break;
      }
    } finally {
      // Also after a failure: what was written is searchable, and the next pass starts from it.
      store.buildSearchIndex();
    }
    store.setMeta('seen_mark', String(mark));
    // An empty answer for a non-empty account means something is off; never mark everything lost on it.
    const lost = seen === 0 && total > 0 ? [] : store.markUnseenLost(mark);
    store.setMeta(FULL_DONE, '1');
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
    sync: (signal) => serial(async () => report(store.getMeta(FULL_DONE) ? await incremental(signal) : await full(signal))),
    reconcile: (signal) => serial(async () => report(await full(signal))),
    hasFullSync: () => store.getMeta(FULL_DONE) !== null,
  };
}
