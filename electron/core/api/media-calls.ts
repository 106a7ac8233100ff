/** The client's media calls: the library list and items, retention, content, and uploads. */
import { z } from 'zod';
import {
  MediaItem as MediaItemSchema,
  MediaListResponse,
  SpecUploadTicket,
  readUploadTicket,
} from '../../../shared/api/index.ts';
import type { MediaItem } from '../../../shared/api/index.ts';
import type { ApiClient, MediaPage, RequestOptions } from './client-types.ts';
import { ServiceError } from './errors.ts';
import { isMissingEndpoint, singleRecord } from './records.ts';
import { call, fetchRaw, read } from './transport.ts';
import type { Transport } from './transport.ts';

export type MediaCalls = Pick<
  ApiClient,
  'listMedia' | 'getMedia' | 'retainMedia' | 'openMediaContent' | 'requestUpload' | 'completeUpload'
>;

const RetainResponse = z.looseObject({
  success: z.literal(true),
  result: z.unknown().optional(),
  data: z.unknown().optional(),
});

async function listMedia(
  t: Transport,
  query: Parameters<ApiClient['listMedia']>[0],
  opts: RequestOptions | undefined,
): Promise<MediaPage> {
  const res = await read(t, '/media', MediaListResponse, opts, query);
  return { total: res.result.total, medias: res.result.medias };
}

/** An item of `GET /media` by id (at most ten pages of 100: the recent ones a client asks for). */
async function findListedMedia(t: Transport, id: string, opts: RequestOptions | undefined): Promise<MediaItem | null> {
  for (let page = 0; page < 10; page++) {
    const res = await listMedia(t, { limit: 100, page }, opts);
    const found = res.medias.find((m) => m.id === id);
    if (found) return found;
    if (res.medias.length === 0 || (page + 1) * 100 >= res.total) return null;
  }
  return null;
}

export function mediaCalls(t: Transport): MediaCalls {
  const enc = encodeURIComponent;
  return {
    listMedia: (query, opts) => listMedia(t, query, opts),
    async getMedia(id, opts) {
      try {
        return await read(t, `/media/${enc(id)}`, singleRecord(MediaItemSchema), opts);
      } catch (error) {
        // `GET /media/:id` is an extension (the spec's `/media/:id` completes an upload): a service
        // without it is asked its list, newest first.
        if (!isMissingEndpoint(error)) throw error;
        const listed = await findListedMedia(t, id, opts);
        if (listed === null) throw new ServiceError('not_found_error', `No media item ${id}`, { status: 404 });
        return listed;
      }
    },
    async retainMedia(id, input, opts) {
      const res = await call(t, {
        method: 'POST',
        path: `/media/${enc(id)}/retain`,
        body: input,
        schema: RetainResponse,
        retryServerErrors: false,
        options: opts,
        defaultTimeoutMs: t.defaultTimeoutMs,
      });
      const data: unknown = res.result ?? (Array.isArray(res.data) ? res.data[0] : res.data);
      const item = MediaItemSchema.safeParse(data);
      return item.success ? item.data : null;
    },
    openMediaContent(id, opts = {}) {
      const url = new URL(`${t.baseUrl}/media/${enc(id)}/content`);
      if (opts.format) url.searchParams.set('format', opts.format);
      // The download of the account's own item is not counted (docs/api.md): a spent window never delays it.
      return fetchRaw(t, url.href, { ...opts, rateCounted: false });
    },
    requestUpload(input, opts) {
      // Safe to retry: an unused ticket simply expires.
      return call(t, {
        method: 'POST',
        path: '/media/upload',
        body: input,
        schema: singleRecord(SpecUploadTicket).transform((ticket) => readUploadTicket(ticket, t.note)),
        retryServerErrors: false,
        options: opts,
        defaultTimeoutMs: t.defaultTimeoutMs,
      });
    },
    completeUpload(id, opts) {
      return call(t, {
        method: 'POST',
        path: `/media/${enc(id)}`,
        body: {},
        schema: singleRecord(MediaItemSchema),
        retryServerErrors: false,
        options: opts,
        defaultTimeoutMs: t.defaultTimeoutMs,
      });
    },
  };
}
