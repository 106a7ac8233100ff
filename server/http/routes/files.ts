import { isMediaId, isStoredFileName } from '../../storage/layout.ts';
import { getMedia, storedFiles } from '../../storage/media-repo.ts';
import { ApiError } from '../../errors.ts';
import type { Route } from '../router.ts';
import { serveFile } from '../serve-file.ts';

/**
 * Stored files, the CDN side: no bearer key (a `<video src>` cannot send one), the URL's HMAC
 * signature is the proof. Ids and names are checked against strict patterns before any path is
 * built, and every failure is the same 404 so nothing is learnt by probing.
 */
export const fileRoutes: Route[] = [
  {
    method: 'GET',
    path: /^\/files\/([^/]+)\/([^/]+)$/,
    permission: null,
    async handle(rc) {
      const [id = '', name = ''] = rc.params;
      const sig = rc.url.searchParams.get('sig') ?? '';
      const notFound = new ApiError('not_found_error', 'file not found');
      if (!isMediaId(id) || !isStoredFileName(name) || !rc.ctx.signer.verifyFile(id, name, sig)) throw notFound;
      const row = getMedia(rc.ctx.db, id);
      const file = row
        ? [
            ...storedFiles(row),
            ...(row.thumbnail ? [{ name: row.thumbnail, mime: thumbMime(row.thumbnail) }] : []),
          ].find((f) => f.name === name)
        : undefined;
      if (!row || !file) throw notFound;
      await serveFile(rc.req, rc.res, rc.ctx.layout.mediaPath(id, name), {
        mime: file.mime,
        // Content under a given URL never changes, so it may be cached for a year.
        cacheControl: `${row.public === 1 ? 'public' : 'private'}, max-age=31536000, immutable`,
        etag: `"${id}-${name}"`,
      });
    },
  },
];

function thumbMime(name: string): string {
  if (name.endsWith('.png')) return 'image/png';
  if (name.endsWith('.webp')) return 'image/webp';
  return 'image/jpeg';
}
