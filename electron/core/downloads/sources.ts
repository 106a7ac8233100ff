import type { MediaItem } from '../../../shared/api/index.ts';
import { ServiceError, errorCodeFor } from '../api/errors.ts';
import type { RawResponse } from '../api/client-types.ts';
import type { DownloadableItem, DownloadManagerOptions } from './types.ts';
import type { RetryBudget, WaitNotice } from '../api/retry.ts';

/** A failed answer as the service's error: its JSON body's message and code, else the HTTP status. */
export async function failureFrom(res: RawResponse): Promise<ServiceError> {
  const text = await res.body.text().catch(() => '');
  let message = `Download failed with HTTP ${res.status}`;
  let code: string | undefined;
  try {
    const body = JSON.parse(text) as { message?: unknown; code?: unknown };
    if (typeof body.message === 'string') message = body.message;
    if (typeof body.code === 'string') code = body.code;
  } catch {
    // not a JSON error body
  }
  return new ServiceError(errorCodeFor(res.status, code), message, { status: res.status });
}

/** The rendition asked for (a MIME type from `item.formats`), else the item's own. */
export function pickFormat(item: DownloadableItem, format?: string): { mime: string; url: string } {
  if (format && format !== item.mime) {
    const f = item.formats?.find((x) => x.mime === format);
    if (!f) throw new ServiceError('invalid_request_error', `Item ${item.id} has no ${format} rendition`);
    return { mime: f.mime, url: f.url };
  }
  return { mime: item.mime, url: item.url };
}

/** What the client's own waits inside a download draw from and tell (the download's, core/api/retry.ts). */
export interface DownloadWaits {
  retryBudget?: RetryBudget;
  onWait?: (notice: WaitNotice) => void;
}

/**
 * The item's own URL. Signed URLs expire (a private item's, after the service's TTL): on a 403
 * or 404 the item is fetched again (`GET /media/:id`, whose URLs are signed anew) and the request
 * is retried once with the fresh URL, which later attempts of this download keep using.
 */
async function fetchItemUrl(
  api: DownloadManagerOptions['api'],
  current: { item: DownloadableItem },
  format: string | undefined,
  headers: Record<string, string>,
  signal: AbortSignal,
  waits: DownloadWaits,
): Promise<RawResponse> {
  const { url } = pickFormat(current.item, format);
  const res = await api.fetch(url, { headers, signal });
  if (res.status !== 403 && res.status !== 404) return res;
  const refused = await failureFrom(res);
  let fresh: MediaItem;
  try {
    fresh = await api.getMedia(current.item.id, { signal, ...waits });
  } catch (error) {
    // The item is gone (or the service cannot say): the first answer is the one to report.
    if (error instanceof ServiceError && error.code === 'not_found_error') throw error;
    throw refused;
  }
  const next = pickFormat(fresh, format).url;
  current.item = fresh;
  return api.fetch(next, { headers, signal });
}

/**
 * Opens an item's content: `GET /media/:id/content` (extension) while the service has it, else the
 * item's own URL. Learned on the first try: null = unknown, false = the service has no content endpoint.
 */
export function createContentOpener(api: DownloadManagerOptions['api']) {
  let contentEndpoint: boolean | null = null;
  return async function open_(
    current: { item: DownloadableItem },
    format: string | undefined,
    headers: Record<string, string>,
    signal: AbortSignal,
    waits: DownloadWaits = {},
  ) {
    const { item } = current;
    if (contentEndpoint !== false) {
      const res = await api.openMediaContent(item.id, {
        headers,
        signal,
        ...(waits.onWait ? { onWait: waits.onWait } : {}),
        ...(format && format !== item.mime ? { format } : {}),
      });
      if (![404, 405, 501].includes(res.status) || contentEndpoint === true) {
        if (res.status < 300 || res.status === 416) contentEndpoint = true;
        return { res, source: 'content' as const };
      }
      // Another implementation without the extension: fall back to the item's URL.
      await res.body.dump();
      contentEndpoint = false;
    }
    return { res: await fetchItemUrl(api, current, format, headers, signal, waits), source: 'url' as const };
  };
}
