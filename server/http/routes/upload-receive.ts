import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { createFileWriter } from '../../../shared/node/file-writer.ts';
import { SNIFF_BYTES, sniffMime } from '../../../shared/node/sniff.ts';
import type { RequestContext } from '../router.ts';
import { json } from '../router.ts';
import { stopReading } from '../body.ts';
import { ApiError } from '../../errors.ts';
import { isUploadId } from '../../storage/layout.ts';
import { getUpload } from '../../uploads/tickets.ts';

/** Uploads being received right now: a second PUT to the same URL waits its turn by failing. */
const receiving = new Set<string>();

/**
 * `PUT /v1/uploads/:id?size&expires&sig`: the signed URL is the credential. The body streams to a
 * temp file through a counter that stops at the signed size, so memory stays flat whatever is
 * sent; the leading bytes are sniffed as they arrive. Only a complete, sniffed file is renamed
 * into place and marked received.
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
  const upload = await getUpload(ctx, id);
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
  if (receiving.has(id)) throw new ApiError('invalid_request_error', 'this upload is already being received');
  receiving.add(id);

  const family = upload.declared_mime.split('/')[0];
  const temp = join(ctx.layout.tmpDir, `upload-${id}-${Date.now()}`);
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
    end: () => checkHead(true),
  };
  try {
    await receiveToFile(req, temp, check);
    if (received !== size)
      throw new ApiError('invalid_request_error', `received ${received} bytes; this URL was signed for ${size}`);
    const target = ctx.layout.uploadPath(id);
    await mkdir(dirname(target), { recursive: true });
    await rename(temp, target);
    const mime = (sniffed as ReturnType<typeof sniffMime>)?.mime ?? upload.declared_mime;
    await ctx.db.run("UPDATE uploads SET state = 'received', sniffed_mime = ? WHERE id = ?", mime, id);
    json(rc, 200, { success: true, data: { id, bytes: received, mime } });
  } catch (error) {
    await rm(temp, { force: true });
    if (error instanceof ApiError) {
      // Refused mid-body: reading stopped at the refusal (stopReading); the router answers with
      // `Connection: close`, so the rest of the body is never read.
      throw error;
    }
    // The client vanished mid-upload: nothing is kept, and the URL can be used again until it expires.
    if (!req.complete) {
      rc.res.destroy();
      return;
    }
    throw error;
  } finally {
    receiving.delete(id);
  }
}

/** Looks at the body as it arrives: an error refuses it (the rest is not written). */
interface BodyCheck {
  chunk(chunk: Buffer): ApiError | null;
  end(): ApiError | null;
}

/**
 * Body chunks are gathered into writes of this size with one write in flight: each write is a
 * trip through libuv's thread pool, and on a loaded machine those trips, not the disk, set the
 * pace (4 MiB writes received a 100 MB PUT ~25% faster than an fs.WriteStream's 1 MiB ones).
 * At most two batches are held per upload.
 */
const WRITE_BATCH_BYTES = 4 << 20;

/**
 * req → check → file, with backpressure: the request is paused while a full batch waits for the
 * write before it. Unlike stream.pipeline this does not destroy the request when the check
 * refuses the body, so the refusal can still be sent as a response.
 *
 * The file is not fsynced: like the rest of the service's files it survives a crash of the
 * process (the kernel holds the pages), and a completed upload is a copy of a file the creator
 * still has.
 */
async function receiveToFile(req: IncomingMessage, path: string, check: BodyCheck): Promise<void> {
  const handle = await open(path, 'w');
  const writer = createFileWriter(handle, { batchBytes: WRITE_BATCH_BYTES, writeBackEveryBytes: 0 });
  try {
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error): void => {
        if (settled) return;
        settled = true;
        req.off('data', onData);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onData = (chunk: Buffer): void => {
        const refused = check.chunk(chunk);
        if (refused) {
          // Not one byte more: a client sending far past the signed size gets its 413 at once.
          stopReading(req);
          return settle(refused);
        }
        const full = writer.push(chunk);
        if (!full) return;
        req.pause();
        full.then(
          () => settled || req.resume(),
          (error: Error) => settle(error),
        );
      };
      req.on('data', onData);
      req.once('end', () => {
        const refused = check.end();
        if (refused) settle(refused);
        else
          writer.flush().then(
            () => settle(),
            (error: Error) => settle(error),
          );
      });
      req.once('error', (error) => settle(error));
      req.once('close', () => {
        if (!req.complete) settle(new Error('client disconnected'));
      });
    });
  } finally {
    // Writes still in flight finish before the handle closes (the caller removes a refused file).
    await writer.flush().catch(() => undefined);
    await handle.close();
  }
}
