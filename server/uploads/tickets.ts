import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { GenerationServices } from '../generation/services.ts';
import { uploadLimitFor } from '../../shared/api/index.ts';
import type { UploadRequest, UploadTicket } from '../../shared/api/index.ts';
import { ApiError } from '../errors.ts';
import { checkStorageQuota, lockStorage } from '../limits/storage-quota.ts';
import { newUploadId } from '../storage/layout.ts';

/** How long a signed upload URL stays valid. */
const UPLOAD_URL_TTL_MS = 15 * 60_000;

/** `POST /media/upload`: checks type, size and quota, and signs a PUT URL bound to the size. */
export async function createUploadTicket(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  req: UploadRequest,
): Promise<UploadTicket> {
  const limit = uploadLimitFor(req.mime);
  if (limit === null) {
    throw new ApiError(
      'unsupported_media_type',
      `mime '${req.mime}' is not accepted (images: PNG, JPEG, WebP, GIF; videos: MP4, WebM, QuickTime)`,
    );
  }
  if (req.size > limit) {
    throw new ApiError(
      'payload_too_large',
      `${req.mime.split('/')[0] ?? 'file'} uploads are limited to ${limit} bytes; ${req.size} declared`,
    );
  }
  const now = ctx.clock.now();
  const id = newUploadId();
  const expires = now + UPLOAD_URL_TTL_MS;
  const expiresUnix = Math.floor(expires / 1000);
  // The declared size is what the signed URL accepts, so reserving it bounds what can land. Checked
  // and reserved in one transaction that holds the account's storage lock, so two tickets (on any
  // node) cannot both pass on the same space.
  await ctx.db.transaction(async (tx) => {
    await lockStorage(tx, auth.user);
    await checkStorageQuota({ db: tx, now, reservations: ctx.reservations }, auth.user, auth.limits, {
      bytes: req.size,
      what: 'This upload',
    });
    await tx.run(
      "INSERT INTO uploads (id, user_id, key_id, filename, declared_mime, size, state, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
      id,
      auth.user,
      auth.keyId,
      req.filename,
      req.mime,
      req.size,
      now,
      expiresUnix * 1000,
    );
  });
  const sig = ctx.signer.uploadSignature(id, req.size, expiresUnix);
  return {
    id,
    uploadUrl: `${ctx.origin()}/v1/uploads/${id}?size=${req.size}&expires=${expiresUnix}&sig=${sig}`,
    method: 'PUT',
    headers: { 'content-type': req.mime, 'content-length': String(req.size) },
    expiresAt: new Date(expiresUnix * 1000).toISOString(),
  };
}
