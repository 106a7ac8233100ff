import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';
import { SNIFF_BYTES, sniffMime } from '../../../shared/node/sniff.ts';
import type { RequestContext } from '../router.ts';
import { json } from '../router.ts';
import { stopReading } from '../body.ts';
import { ApiError } from '../../errors.ts';
import { isUploadId, uploadPutKey } from '../../storage/layout.ts';
import { claimUpload } from '../../uploads/receive-claim.ts';
import type { ReceiveClaim } from '../../uploads/receive-claim.ts';
import { markUploadReceived } from '../../uploads/mark-received.ts';
import { getUpload } from '../../storage/uploads.ts';

/**
 * `PUT /v1/uploads/:id?size&expires&sig`: the signed URL is the credential. The body streams to the
 * blob store (under this PUT's own key, uploads/<id>/put-<claim id>; in a bucket a multipart upload,
 * never the whole file in memory) through a counter that stops at the signed size, so memory stays
 * flat whatever is sent; the leading bytes are sniffed as they arrive. Only a complete, sniffed body
 * is kept (a refused or cut-off one leaves nothing in the store), and then marked received, the
 * row recording its key; the one PUT that marks it answers 200.
 */
export async function receiveUpload(rc: RequestContext): Promise<void> {
  const { ctx, req, url } = rc;
  const id = rc.params[0] ?? '';
  const size = Number(url.searchParams.get('size'));
  const expires = Number(url.searchParams.get('expires'));
  const sig = url.searchParams.get('sig') ?? '';
  if (
    !isUploadId(id) ||
    !Number.isSafeInteger(size) ||
    !Number.isSafeInteger(expires) ||
    !ctx.signer.verifyUpload(id, size, expires, sig)
  ) {
    throw new ApiError('permission_error', 'upload URL signature is invalid');
  }
  if (expires * 1000 <= ctx.clock.now())
    throw new ApiError('permission_error', 'upload URL has expired; request a new one');
  const upload = await getUpload(ctx.db, id);
  if (!upload || upload.size !== size) throw new ApiError('not_found_error', 'no such upload');
  if (upload.state === 'received' || upload.state === 'completed') {
    throw new ApiError('invalid_request_error', 'this upload has already been received');
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > size) {
    throw new ApiError(
      'payload_too_large',
      `body of ${declared} bytes is larger than the ${size} bytes this URL was signed for`,
    );
  }
  if (declared !== undefined && Number(declared) < size) {
    throw new ApiError(
      'invalid_request_error',
      `Content-Length ${declared} does not match the ${size} bytes this URL was signed for`,
    );
  }
  // One PUT at a time per upload, across nodes: a second one waits its turn by failing.
  const claim = await claimUpload(ctx.db, id, ctx.claimHolder, (error) =>
    ctx.logger.warn(`upload ${id}: its claim could not be renewed or let go of (it lapses): ${String(error)}`),
  );
  if ('busyUntil' in claim) throw busyError(claim.busyUntil);

  const family = upload.declared_mime.split('/')[0];
  let received = 0;
  let head = Buffer.alloc(0);
  let sniffed: ReturnType<typeof sniffMime> = null;
  const checkHead = (final: boolean): ApiError | null => {
    if (sniffed || (head.length < SNIFF_BYTES && !final)) return null;
    sniffed = sniffMime(head);
    if (!sniffed || sniffed.kind !== family) {
      return new ApiError(
        'unsupported_media_type',
        `content is not ${upload.declared_mime} (the bytes do not match an accepted ${family ?? ''} type)`,
      );
    }
    return null;
  };
  const check: BodyCheck = {
    chunk(chunk) {
      received += chunk.length;
      if (received > size)
        return new ApiError('payload_too_large', `body is larger than the ${size} bytes this URL was signed for`);
      if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
      return checkHead(false);
    },
    end() {
      if (received !== size)
        return new ApiError('invalid_request_error', `received ${received} bytes; this URL was signed for ${size}`);
      return checkHead(true);
    },
  };
  // This PUT's own key: whatever another PUT of this upload stores, it is never this object.
  const key = uploadPutKey(id, claim.id);
  try {
    // Another PUT may have received it between the look-up above and the claim.
    const state = (await getUpload(ctx.db, id))?.state;
    if (state === 'received' || state === 'completed') {
      throw new ApiError('invalid_request_error', 'this upload has already been received');
    }
    // The store counts too (the signed size, itself within the 20 MB / 100 MB limits): what it
    // keeps can never be larger, whatever reaches it.
    await receiveToStore(req, check, claim, (body) =>
      ctx.blobs.putStream(key, body, { contentType: upload.declared_mime, maxBytes: size }),
    );
    const mime = (sniffed as ReturnType<typeof sniffMime>)?.mime ?? upload.declared_mime;
    let marked: boolean;
    try {
      marked = await markUploadReceived(ctx.db, id, { mime, key });
    } catch (error) {
      // No row says it was received: the stored bytes would be an orphan.
      await ctx.blobs.delete(key).catch(() => undefined);
      throw error;
    }
    if (!marked) {
      // Received by another PUT (whose row names its own key), or its ticket expired and was swept
      // meanwhile: no row names this PUT's bytes. A delete that fails leaves an orphan under the
      // upload's prefix, for retention (with the upload) or fsck.
      await ctx.blobs.delete(key).catch(() => undefined);
      if (!(await getUpload(ctx.db, id))) throw new ApiError('not_found_error', 'no such upload');
      throw takenOver();
    }
    // A single record under `result` (the spec: `data` is an array).
    json(rc, 200, { success: true, result: { id, bytes: received, mime } });
  } catch (error) {
    if (error instanceof ApiError) {
      // Refused mid-body: reading stopped at the refusal (stopReading); the router answers with
      // `Connection: close`, so the rest of the body is never read. Nothing was stored.
      throw error;
    }
    // The client vanished mid-upload: nothing is kept, and the URL can be used again until it expires.
    if (!req.complete) {
      rc.res.destroy();
      return;
    }
    throw error;
  } finally {
    await claim.release();
  }
}

/** This PUT lost its claim to another PUT (claimUpload): it stops, keeping nothing. */
function takenOver(): ApiError {
  return new ApiError(
    'invalid_request_error',
    'this upload was taken over by another request while this one was being received (its claim lapsed, or the database restarted); nothing of this request was kept',
  );
}

/** Looks at the body as it arrives: an error refuses it (the rest is not written). */
interface BodyCheck {
  chunk(chunk: Buffer): ApiError | null;
  end(): ApiError | null;
}

/** Chunks the store may be handed before the request is paused (the store reads on at its own pace). */
const BODY_BUFFER_BYTES = 4 << 20;

/**
 * req → check → the store's putStream, with backpressure: the request is paused while the store
 * has not taken what it was given. Unlike stream.pipeline this does not destroy the request when
 * the check refuses the body, so the refusal can still be sent as a response; the store is given a
 * failing stream instead, and keeps nothing. Resolves when the store has the whole body.
 *
 * The claim is watched too: lost while the body arrives, the body fails at once; and once the whole
 * body is here, the claim is confirmed before the store is told the body ended (until then it
 * keeps nothing), so a PUT that took the upload over since the last renewal stops this one before
 * anything is stored. One that takes it over after the confirmation stores under a key of its own,
 * and marking the upload received decides which body is kept (receiveUpload).
 */
async function receiveToStore(
  req: IncomingMessage,
  check: BodyCheck,
  claim: ReceiveClaim,
  put: (body: Readable) => Promise<unknown>,
): Promise<void> {
  const body = new PassThrough({ highWaterMark: BODY_BUFFER_BYTES });
  let failure: Error | null = null as Error | null;
  const fail = (error: Error): void => {
    if (failure) return;
    failure = error;
    req.off('data', onData);
    body.destroy(error);
  };
  const onData = (chunk: Buffer): void => {
    const refused = check.chunk(chunk);
    if (refused) {
      // Not one byte more: a client sending far past the signed size gets its 413 at once.
      stopReading(req);
      return fail(refused);
    }
    if (!body.write(chunk)) {
      req.pause();
      body.once('drain', () => failure || req.resume());
    }
  };
  const onLost = (): void => {
    stopReading(req);
    fail(takenOver());
  };
  if (claim.lost.aborted) onLost();
  claim.lost.addEventListener('abort', onLost, { once: true });
  req.on('data', onData);
  req.once('end', () => {
    const refused = check.end();
    if (refused) return fail(refused);
    claim.confirm().then(
      (held) => {
        if (failure) return;
        if (!held) return fail(takenOver());
        // Confirmed: from here the store completes, and marking the upload received decides.
        claim.lost.removeEventListener('abort', onLost);
        body.end();
      },
      (error: unknown) => fail(error instanceof Error ? error : new Error(String(error))),
    );
  });
  req.once('error', (error) => fail(error));
  req.once('close', () => {
    if (!req.complete) fail(new Error('client disconnected'));
  });
  try {
    await put(body);
  } catch (error) {
    claim.lost.removeEventListener('abort', onLost);
    // Our own refusal, whatever the store's client made of the failing stream. A store that
    // failed on its own reads no more of the request.
    if (failure) throw failure;
    stopReading(req);
    fail(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
  claim.lost.removeEventListener('abort', onLost);
  if (failure) throw failure;
}

/**
 * Another PUT is receiving this upload (on this node or another): 409, and Retry-After the time
 * its claim lasts unless renewed, which is when a PUT whose node died stops holding it. A PUT that
 * ends sooner lets go at once, so an earlier retry may well succeed (docs/api.md).
 */
function busyError(until: number): ApiError {
  const wait = Math.max(1, Math.ceil((until - Date.now()) / 1000));
  return new ApiError(
    'conflict',
    `this upload is being received by another PUT; retry after ${wait} s: it waits for that PUT to end, ` +
      `or for its claim to lapse if its node died`,
    { retry_after: wait },
    { 'retry-after': String(wait) },
  );
}
