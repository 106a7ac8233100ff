import { markDownloaded } from '../../generation/downloaded.ts';
import { checkFileUrl } from '../../generation/urls.ts';
import { isMediaId, isStoredFileName, mediaKey } from '../../storage/layout.ts';
import { storedFiles } from '../../storage/media-repo.ts';
import { ApiError } from '../../errors.ts';
import type { Route } from '../router.ts';
import { serveFile } from '../serve-file.ts';

/**
 * How long a presigned URL a redirect hands out works: long enough for a player to read a whole
 * video through it, never longer than the signed file URL itself.
 */
const REDIRECT_TTL_SECONDS = 3_600;

/**
 * Stored files, the CDN side: no bearer key (a `<video src>` cannot send one), the URL's HMAC
 * signature is the proof. Ids and names are checked against strict patterns before any path is
 * built, and every failure is the same 404 so nothing is learnt by probing; only a genuine URL
 * whose time has passed gets 403, telling its holder to fetch the item again for a fresh one.
 * The bytes come from the blob store, or, with --file-redirects, from the bucket after a 302.
 */
export const fileRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/files\/([^/]+)\/([^/]+)$/,
    public: true,
    async handle(rc) {
      const [id = '', name = ''] = rc.params;
      const notFound = new ApiError('not_found_error', 'file not found');
      if (!isMediaId(id) || !isStoredFileName(name)) throw notFound;
      const check = await checkFileUrl(rc.ctx, id, name, rc.url.searchParams);
      if (!check.ok && check.expired) {
        throw new ApiError(
          'permission_error',
          `this file URL has expired; GET /v1/media/${id} returns the item with fresh URLs`,
        );
      }
      if (!check.ok) throw notFound;
      const { row, grant } = check;
      const file = [
        ...storedFiles(row),
        ...(row.thumbnail ? [{ name: row.thumbnail, mime: thumbMime(row.thumbnail) }] : []),
      ].find((f) => f.name === name);
      if (!file) throw notFound;
      const remaining = grant.expires === null ? 31_536_000 : grant.expires - Math.floor(rc.ctx.clock.now() / 1000);
      // The owner's complete download of a rendition (not a thumbnail, not a Range fragment: a
      // player streaming or seeking is not keeping a copy) exempts the item from retention.
      const keeps = grant.owner && row.downloaded_at === null && file.name !== row.thumbnail;
      const key = mediaKey(id, name);
      const store = rc.ctx.blobs;
      if (rc.ctx.fileRedirects && store.presignGet) {
        // The bucket serves the bytes (and Range) itself. Whether a download completes cannot be
        // seen from here: the owner's request for the whole file (no Range) counts as one, recorded
        // before the redirect is answered.
        if (keeps && rc.req.headers.range === undefined && rc.req.method === 'GET')
          await markDownloaded(rc.ctx.db, rc.ctx.clock.now(), id);
        const location = await store.presignGet(key, {
          expiresInSeconds: Math.max(1, Math.min(remaining, REDIRECT_TTL_SECONDS)),
          contentType: file.mime,
        });
        rc.res.writeHead(302, { location, 'cache-control': 'no-store' });
        rc.res.end();
        return;
      }
      await serveFile(rc.req, rc.res, store, key, {
        mime: file.mime,
        // Content under a given URL never changes, so it may be cached for as long as the URL works.
        cacheControl: `${row.public === 1 ? 'public' : 'private'}, max-age=${Math.max(0, remaining)}, immutable`,
        etag: `"${id}-${name}"`,
        ...(keeps
          ? {
              onWholeBody: () =>
                void markDownloaded(rc.ctx.db, rc.ctx.clock.now(), id).catch((error: unknown) =>
                  rc.ctx.logger.warn(`could not mark ${id} downloaded: ${String(error)}`),
                ),
            }
          : {}),
      });
    },
  },
];

function thumbMime(name: string): string {
  if (name.endsWith('.png')) return 'image/png';
  if (name.endsWith('.webp')) return 'image/webp';
  return 'image/jpeg';
}
