import { AUTH_MESSAGES, MediaListQuery, RetainRequest, parseModelId } from '../../../shared/api/index.ts';
import { extensionFor } from '../../generation/store.ts';
import { markDownloaded } from '../../generation/downloaded.ts';
import { fileUrls } from '../../generation/urls.ts';
import { retainItem } from '../../retention/retain.ts';
import { isMediaId, mediaKey } from '../../storage/layout.ts';
import type { MediaRow, ResolvedMediaFilters } from '../../storage/media-rows.ts';
import { getMedia, listMedia, storedFiles, toMediaItem, unsearchable } from '../../storage/media-repo.ts';
import { readJsonBody } from '../body.ts';
import { ApiError } from '../../errors.ts';
import type { AuthenticatedRequest, Route } from '../router.ts';
import { json } from '../router.ts';
import { serveFile } from '../serve-file.ts';
import { parseOrThrow } from '../../errors.ts';

/** A filter that matches nothing: an unknown provider or model lists no items rather than failing. */
const NOTHING = '\u0000';

function resolveFilters(rc: AuthenticatedRequest, q: MediaListQuery): ResolvedMediaFilters {
  // No prompt can be found by these characters: say so rather than answer an empty list.
  if (q.search !== undefined && unsearchable(q.search))
    throw new ApiError('invalid_request_error', 'search must not contain U+0000 or U+FFFF');
  const viewer = rc.auth.user;
  const f: ResolvedMediaFilters = {
    viewer,
    sort: q.sort,
    media: q.media,
    size: q.size?.toLowerCase(),
    search: q.search,
  };
  if (q.user !== undefined) f.user = q.user === 'me' ? viewer : q.user;
  if (q.model !== undefined) {
    const parsed = parseModelId(q.model);
    if (!parsed.ok) throw new ApiError('invalid_request_error', `model: ${parsed.error}`);
    f.model = `${parsed.id.base}/${parsed.id.model}`;
    if (parsed.id.version !== null) f.modelVersion = parsed.id.version;
  }
  if (q.provider !== undefined) f.providerId = rc.ctx.catalog.findProvider(q.provider)?.id ?? NOTHING;
  return f;
}

/** The item if the caller may see it: their own, or public. Anything else is "not found". */
async function visibleItem(rc: AuthenticatedRequest): Promise<MediaRow> {
  const id = rc.params[0] ?? '';
  const row = isMediaId(id) ? await getMedia(rc.ctx.db, id) : undefined;
  if (!row || (row.user_id !== rc.auth.user && row.public !== 1))
    throw new ApiError('not_found_error', `no media item '${id}'`);
  return row;
}

export const mediaRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/media$/,
    permission: 'read',
    async handle(rc) {
      const q = parseOrThrow(MediaListQuery, Object.fromEntries(rc.url.searchParams));
      const { total, rows } = await listMedia(rc.ctx.db, resolveFilters(rc, q), q.limit, q.page);
      const urls = fileUrls(rc.ctx, rc.auth.user);
      json(rc, 200, { success: true, result: { total, medias: rows.map((r) => toMediaItem(r, urls)) } });
    },
  },
  {
    method: 'GET',
    path: /^\/media\/([^/]+)$/,
    permission: 'read',
    async handle(rc) {
      // A single record answers under `result` (docs/api.md), its URLs signed anew.
      json(rc, 200, {
        success: true,
        result: toMediaItem(await visibleItem(rc), fileUrls(rc.ctx, rc.auth.user)),
      });
    },
  },
  {
    // The authenticated download; the owner's download exempts the item from retention.
    method: 'GET',
    path: /^\/media\/([^/]+)\/content$/,
    permission: 'read',
    // Delivering an item the account already made follows a counted generation (docs/api.md,
    // "What counts against the rate limits").
    rateLimited: false,
    async handle(rc) {
      const row = await visibleItem(rc);
      const files = storedFiles(row);
      const format = rc.url.searchParams.get('format')?.toLowerCase();
      const file =
        format === undefined
          ? files[0]
          : files.find((f) => f.mime === format || extensionFor(f.mime) === format || f.name === format);
      if (!file) {
        throw new ApiError(
          'not_found_error',
          `no format '${format ?? ''}' for ${row.id} (formats: ${files.map((f) => extensionFor(f.mime)).join(', ')})`,
        );
      }
      if (row.user_id === rc.auth.user && row.downloaded_at === null && rc.req.method === 'GET')
        await markDownloaded(rc.ctx.db, rc.ctx.clock.now(), row.id);
      // Streamed through the service even with --file-redirects: the caller sent its key, which must
      // not follow a redirect to the bucket.
      await serveFile(rc.req, rc.res, rc.ctx.blobs, mediaKey(row.id, file.name), {
        mime: file.mime,
        cacheControl: 'private, no-cache',
        etag: `"${row.id}-${file.name}"`,
        disposition: `attachment; filename="${row.id}.${extensionFor(file.mime)}"`,
        headers: rc.headers,
      });
    },
  },
  {
    method: 'POST',
    path: /^\/media\/([^/]+)\/retain$/,
    // Keeping an item keeps its storage: a read-only key may look, not hold space forever.
    permission: ['generate', 'upload'],
    async handle(rc) {
      const body = parseOrThrow(RetainRequest, await readJsonBody(rc.req));
      const row = await visibleItem(rc);
      if (row.user_id !== rc.auth.user)
        // The spec's 403 message (its Authentication table); why, in a field of its own.
        throw new ApiError('permission_error', AUTH_MESSAGES.forbidden, {
          details: 'only the owner can extend retention of an item',
        });
      const updated = await retainItem(rc.ctx.db, row, body, rc.ctx.clock.now());
      json(rc, 200, { success: true, result: toMediaItem(updated, fileUrls(rc.ctx, rc.auth.user)) });
    },
  },
];
