import { randomUUID } from 'node:crypto';
import { open, rm, stat } from 'node:fs/promises';
import type { MediaItem } from '../../shared/api/index.ts';
import { probe } from '../../shared/node/ffmpeg.ts';
import type { ProbeResult } from '../../shared/node/ffmpeg.ts';
import { SNIFF_BYTES, implausibleDecode } from '../../shared/node/sniff.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError, rateLimitError } from '../errors.ts';
import { extensionFor, removeItemFiles } from '../generation/store.ts';
import { localFile } from '../generation/local-copy.ts';
import { BlobNotFoundError } from '../storage/blobs/index.ts';
import { fileUrls } from '../generation/urls.ts';
import { retentionMs } from '../generation/services.ts';
import type { GenerationServices } from '../generation/services.ts';
import { isUploadId, mediaKey, newMediaId, receivedUploadKey } from '../storage/layout.ts';
import { leaseHolder, releaseLease, takeLease } from '../storage/leases.ts';
import { getMedia, insertMedia, toMediaItem } from '../storage/media-repo.ts';
import { getUpload } from '../storage/uploads.ts';
import type { UploadRow } from '../storage/uploads.ts';

/**
 * ffprobe on the received file, then the plausibility check (shared/node/sniff.ts): the facts, or
 * why the file is refused. The one place completion runs ffprobe.
 */
async function verifyDecodes(
  ctx: GenerationServices,
  path: string,
  kind: 'image' | 'video',
): Promise<ProbeResult | string> {
  let facts: ProbeResult;
  try {
    facts = await probe(path, { timeoutMs: 60_000, signal: ctx.shutdown });
  } catch {
    if (ctx.shutdown.aborted) throw new ApiError('provider_unavailable', 'the service is shutting down');
    return 'ffprobe cannot read it';
  }
  if (!facts.hasVideo || facts.width === 0 || facts.height === 0) return 'it holds no picture';
  if (kind === 'video' && !(facts.durationSeconds > 0)) return 'it has no duration';
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return implausibleDecode(head.subarray(0, bytesRead), facts) ?? facts;
  } finally {
    await handle.close();
  }
}

/** Uploaded items carry these in place of a model and provider (nothing generated them). */
const UPLOAD_MODEL = 'upload/file';
const UPLOAD_PROVIDER = { id: 'upload', slug: 'upload', name: 'Upload' } as const;

/**
 * `POST /media/:id` completes an upload: the received bytes must decode (ffprobe) as the picture
 * their header claims, or they are deleted and refused with 415; then they
 * become a media item (the file moved in the blob store first, the row after) whose `url` can be a
 * generation's `image_url`.
 * GenerationServices twice returns the same item.
 */
export async function completeUpload(ctx: GenerationServices, auth: AuthenticatedKey, id: string): Promise<MediaItem> {
  // A completion of the same upload may be under way (the client retried after a timeout, or sent
  // it twice, to any node): the first holds the upload's completion lease, the others wait for it
  // to end and then answer as it left the upload (its item, or its refusal's state).
  for (let attempt = 1; ; attempt++) {
    const upload = isUploadId(id) ? await getUpload(ctx.db, id) : undefined;
    if (!upload || upload.user_id !== auth.user) throw new ApiError('not_found_error', `no upload '${id}'`);
    const done = await completedItem(ctx, auth, id, upload);
    if (done) return done;
    if (upload.state !== 'received')
      throw new ApiError(
        'invalid_request_error',
        `upload '${id}' has not been received yet; PUT the file to its uploadUrl first`,
      );
    const lease = `${COMPLETION_LEASE_PREFIX}${id}`;
    const holder = randomUUID();
    if (await takeLease(ctx.db, lease, holder, COMPLETION_LEASE_MS, Date.now())) {
      try {
        // Read again under the lease: a completion that ended since the read above changed it.
        const now = await getUpload(ctx.db, id);
        if (now?.state === 'received') return await completeReceived(ctx, auth, id, now);
      } finally {
        await releaseLease(ctx.db, lease, holder).catch(() => undefined);
      }
      continue;
    }
    // Still held after a while (a slow file, a node that died holding it), or taken again each time
    // it came free: say what is in the way, and when to look again.
    if (attempt === 3 || !(await untilLeaseFree(ctx, lease)))
      throw rateLimitError(`upload '${id}' is being completed by another request`, 5);
  }
}

/**
 * Completions run one per upload: a lease row named this plus the upload id. It sits under the
 * upload claims' `upload:` prefix so that their sweep (receive-claim.ts) removes a lapsed one too.
 */
const COMPLETION_LEASE_PREFIX = 'upload:complete:';
/** Longer than a completion takes (ffprobe's 60 s limit, a copy in the bucket); lapses if its node dies. */
const COMPLETION_LEASE_MS = 120_000;

/** How long a completion waits for another of the same upload before answering 429. */
const COMPLETION_WAIT_MS = 30_000;

/** Whether the lease came free within COMPLETION_WAIT_MS. */
async function untilLeaseFree(ctx: GenerationServices, lease: string): Promise<boolean> {
  const end = Date.now() + COMPLETION_WAIT_MS;
  while ((await leaseHolder(ctx.db, lease, Date.now())) !== null) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Completes upload `id`, received and not completed, for the holder of its completion lease. */
async function completeReceived(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  id: string,
  upload: UploadRow,
): Promise<MediaItem> {
  // The kept PUT's bytes, as marking the upload received recorded them (or where older rows kept them).
  const key = receivedUploadKey(id, upload.received_key);
  if (key === null) throw new Error(`upload ${id} records a key that is not one of its own`);
  const mime = upload.sniffed_mime ?? upload.declared_mime;
  const kind = mime.startsWith('video/') ? 'video' : 'image';
  const mediaId = newMediaId();
  const name = `${kind}.${extensionFor(mime)}`;
  const work = await ctx.layout.makeWorkDir('complete');
  let moved: string | null = null;
  let committed = false;
  try {
    // ffprobe reads a file: the stored one in place on disk, a temp copy from a bucket.
    const source = await localFile(ctx.blobs, key, work, 'upload').catch((error: unknown) => {
      if (error instanceof BlobNotFoundError) return null;
      throw error;
    });
    const facts = source === null ? 'the received file is gone' : await verifyDecodes(ctx, source, kind);
    if (typeof facts === 'string' || source === null) {
      const why = typeof facts === 'string' ? facts : 'the received file is gone';
      // Refused for good: the bytes go, and the signed URL may take a real file until it expires.
      await ctx.blobs.delete(key);
      await ctx.db.run(
        "UPDATE uploads SET state = 'pending', sniffed_mime = NULL, received_key = NULL WHERE id = ? AND state = 'received'",
        id,
      );
      throw new ApiError(
        'unsupported_media_type',
        `the uploaded file does not decode as ${kind === 'video' ? 'a video' : 'an image'}: ${why}`,
      );
    }
    const bytes = (await stat(source)).size;
    // The received bytes become the item's file (on disk a rename; in a bucket a server-side copy).
    const target = mediaKey(mediaId, name);
    await ctx.blobs.move(key, target, { contentType: mime });
    moved = target;
    const now = ctx.clock.now();
    const won = await ctx.db.transaction(async (tx) => {
      // Only from 'received': should a completion outlive its lease (a node stalled past it) while
      // another completes the upload, only one of them makes an item; the other answers with it.
      const marked = await tx.run(
        "UPDATE uploads SET state = 'completed', media_id = ? WHERE id = ? AND state = 'received'",
        mediaId,
        id,
      );
      if (marked.changes === 0) return false;
      await insertMedia(tx, {
        id: mediaId,
        user_id: auth.user,
        key_id: auth.keyId,
        kind,
        model: UPLOAD_MODEL,
        model_version: '1',
        provider_id: UPLOAD_PROVIDER.id,
        provider_slug: UPLOAD_PROVIDER.slug,
        provider_name: UPLOAD_PROVIDER.name,
        prompt: '',
        size: kind === 'video' ? `${facts.height}p` : `${facts.width}x${facts.height}`,
        duration: kind === 'video' ? Math.round(facts.durationSeconds * 1000) / 1000 : 0,
        width: facts.width,
        height: facts.height,
        mime,
        files: [{ name, mime, bytes }],
        thumbnail: null,
        bytes,
        price: 0,
        public: 0,
        created_at: now,
        expires_at: now + retentionMs(ctx.retentionOverrideSeconds, auth.limits),
      });
      return true;
    });
    if (!won) {
      // The other completion's item has the bytes: this copy of them is nobody's.
      await removeItemFiles(ctx.blobs, ctx.logger, mediaId);
      moved = null;
      const first = await completedItem(ctx, auth, id);
      if (first) return first;
      throw new ApiError('not_found_error', `upload '${id}' is no longer waiting to be completed`);
    }
    committed = true;
  } finally {
    // Moved but no row: the file goes back, and the upload can be completed again.
    if (moved && !committed)
      await ctx.blobs
        .move(moved, key, { contentType: mime })
        .catch(() => removeItemFiles(ctx.blobs, ctx.logger, mediaId));
    await rm(work, { recursive: true, force: true });
  }
  const row = await getMedia(ctx.db, mediaId);
  if (!row) throw new Error('completed upload row is missing');
  return toMediaItem(row, fileUrls(ctx, auth.user));
}

/**
 * The item an upload was completed into (read again unless `upload` is given), or undefined while
 * it is not completed; refused when that item has since been deleted.
 */
async function completedItem(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  id: string,
  upload?: UploadRow,
): Promise<MediaItem | undefined> {
  const row = upload ?? (await getUpload(ctx.db, id));
  if (row?.state !== 'completed' || !row.media_id) return undefined;
  const item = await getMedia(ctx.db, row.media_id);
  if (item) return toMediaItem(item, fileUrls(ctx, auth.user));
  throw new ApiError('not_found_error', `upload '${id}' was completed but its item has since been deleted`);
}
