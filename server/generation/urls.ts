import type { GenerationServices } from './services.ts';
import type { UrlMaker } from '../storage/media-repo.ts';
import type { MediaRow } from '../storage/media-rows.ts';
import { getMedia } from '../storage/media-repo.ts';
import type { FileGrant } from '../storage/signing.ts';

/** How long a private item's file URL works, unless the service is told otherwise (`--file-url-ttl`). */
export const DEFAULT_FILE_URL_TTL_SECONDS = 86_400;

/**
 * The expiry of URLs signed now: at least `ttl` seconds away, rounded up to a step of a 24th of
 * the TTL, so that every response within one step hands out the same URL and browser and CDN
 * caches keep working between refreshes.
 */
function fileUrlExpiry(nowMs: number, ttlSeconds: number): number {
  const step = Math.max(1, Math.floor(ttlSeconds / 24));
  return Math.ceil((Math.ceil(nowMs / 1000) + ttlSeconds) / step) * step;
}

/**
 * Signed, key-less file URLs under `/v1/files/` (what a `<video src>` or a CDN would use), signed
 * anew for each response. A private item's URLs expire; a public item's do not. A URL handed to
 * the item's owner carries `owner=1` (bound by the signature): a complete download through it
 * counts as the owner's download.
 */
export function fileUrls(ctx: GenerationServices, viewer: string | null): UrlMaker {
  const origin = ctx.origin();
  const expires = fileUrlExpiry(ctx.clock.now(), ctx.fileUrlTtlSeconds ?? DEFAULT_FILE_URL_TTL_SECONDS);
  const grantFor = (row: MediaRow): FileGrant => ({
    expires: row.public === 1 ? null : expires,
    owner: viewer !== null && row.user_id === viewer,
  });
  return {
    fileUrl(row, file) {
      const grant = grantFor(row);
      const query = new URLSearchParams();
      if (grant.owner) query.set('owner', '1');
      if (grant.expires !== null) query.set('expires', String(grant.expires));
      query.set('sig', ctx.signer.fileSignature(row.id, file, grant));
      return `${origin}/v1/files/${row.id}/${file}?${query.toString()}`;
    },
    urlExpiresAt(row) {
      const { expires: at } = grantFor(row);
      return at === null ? null : new Date(at * 1000).toISOString();
    },
  };
}

export type FileUrlCheck = { ok: true; row: MediaRow; grant: FileGrant } | { ok: false; expired: boolean };

/**
 * Checks a file URL's query (`owner`, `expires`, `sig`) for one stored file. `expired` is set only
 * for a genuine signature whose time has passed, so telling it apart teaches a prober nothing.
 * A private item needs an expiring URL: URLs signed before expiry existed no longer open it.
 */
export async function checkFileUrl(
  ctx: GenerationServices,
  mediaId: string,
  file: string,
  query: URLSearchParams,
): Promise<FileUrlCheck> {
  const expiresText = query.get('expires');
  const ownerText = query.get('owner');
  if ((expiresText !== null && !/^\d{1,12}$/.test(expiresText)) || (ownerText !== null && ownerText !== '1'))
    return { ok: false, expired: false };
  const grant: FileGrant = { expires: expiresText === null ? null : Number(expiresText), owner: ownerText === '1' };
  if (!ctx.signer.verifyFile(mediaId, file, grant, query.get('sig') ?? '')) return { ok: false, expired: false };
  const row = await getMedia(ctx.db, mediaId);
  if (!row || (row.public !== 1 && grant.expires === null)) return { ok: false, expired: false };
  if (grant.expires !== null && grant.expires * 1000 <= ctx.clock.now()) return { ok: false, expired: true };
  return { ok: true, row, grant };
}
