import type { MediaItem } from '../../../shared/api/index.ts';
import type { LibraryItem } from './store.ts';

/** URLs about to expire are refreshed this early, so one handed to the renderer still works when it is used. */
const URL_REFRESH_MARGIN_MS = 5 * 60_000;
/** At most one background refresh pass this often, however many pages the renderer asks for. */
const URL_REFRESH_INTERVAL_MS = 60_000;

/** True when the item's signed URLs have expired or are about to (`urlExpiresAt`, an extension, docs/api.md). */
export function urlsExpiring(item: MediaItem, now: number, marginMs = URL_REFRESH_MARGIN_MS): boolean {
  if (typeof item.urlExpiresAt !== 'string') return false;
  const at = Date.parse(item.urlExpiresAt);
  return Number.isFinite(at) && at <= now + marginMs;
}

export interface UrlRefresherOptions {
  /** `GET /media/:id`: one item with its URLs signed anew. */
  getMedia(id: string, options?: { signal?: AbortSignal }): Promise<MediaItem>;
  /** Stores what the service returned (the library's upsert). */
  upsert(items: readonly MediaItem[]): unknown;
  /** A full pass over the account's list: every page signs its items' URLs anew. */
  reconcile(signal?: AbortSignal): Promise<unknown>;
  now: () => number;
}

export interface UrlRefresher {
  /** The item, with fresh URLs when its own had expired (one request); the stale one if that fails. */
  refreshItem(entry: LibraryItem, signal?: AbortSignal): Promise<MediaItem>;
  /**
   * When any of these items' URLs expire, refreshes the library in the background through the list
   * (one request per 100 items, instead of one per item), at most once per interval; the library's
   * sync then announces the change and the renderer asks again.
   */
  refreshInBackground(entries: readonly LibraryItem[]): void;
}

/**
 * Keeps the signed URLs the library hands to the renderer (thumbnails, playback) working: a
 * service may let a private item's URLs expire (Clipdesk's does after 24 h by default).
 */
export function createUrlRefresher(o: UrlRefresherOptions): UrlRefresher {
  let running: Promise<unknown> | null = null;
  let lastStarted = -Infinity;
  return {
    async refreshItem(entry, signal) {
      if (entry.lostAt !== null || !urlsExpiring(entry.item, o.now())) return entry.item;
      try {
        const fresh = await o.getMedia(entry.item.id, signal ? { signal } : {});
        o.upsert([fresh]);
        return fresh;
      } catch {
        // Offline or the item is gone: the next sync says which; show what we have meanwhile.
        return entry.item;
      }
    },
    refreshInBackground(entries) {
      const now = o.now();
      if (running || now - lastStarted < URL_REFRESH_INTERVAL_MS) return;
      if (!entries.some((e) => e.lostAt === null && urlsExpiring(e.item, now))) return;
      lastStarted = now;
      running = o
        .reconcile()
        .catch(() => undefined)
        .finally(() => {
          running = null;
        });
    },
  };
}
