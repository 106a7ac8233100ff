import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { CONTENT_LIMITS } from '../../../shared/api/index.ts';
import type { MediaItem, UploadTicket } from '../../../shared/api/index.ts';
import { probe, runFfmpeg } from '../../../shared/node/ffmpeg.ts';
import { SNIFF_BYTES, sniffMime } from '../../../shared/node/sniff.ts';
import type { Sniffed } from '../../../shared/node/sniff.ts';
import { ServiceError } from '../api/errors.ts';
import type { ApiClient } from '../api/client-types.ts';
import { DEFAULT_RETRY_POLICY, RetryBudget, realSleep, retrying } from '../api/retry.ts';
import type { RetryDeps, Sleep, WaitNotice } from '../api/retry.ts';
import { createMemoryDedupStore } from './dedup.ts';
import type { UploadDedupStore } from './dedup.ts';

export type UploadSource = { path: string; filename?: string } | { buffer: Uint8Array; filename: string };

export type UploadPhase = 'checking' | 'resizing' | 'hashing' | 'uploading' | 'completing' | 'done';

export interface UploadProgress {
  phase: UploadPhase;
  sent: number;
  total: number;
}

export interface UploadOptions {
  signal?: AbortSignal;
  onProgress?: (progress: UploadProgress) => void;
  /** Downsize images larger than this (the model's limit) with ffmpeg before uploading. */
  downsize?: { maxWidth: number; maxHeight: number };
  /** What the PUT's retry waits draw from (a job's budget); one per upload when not given (core/api/retry.ts). */
  retryBudget?: RetryBudget;
  /** Told before each wait to send the file again. */
  onWait?: (notice: WaitNotice) => void;
}

export interface UploadResult {
  item: MediaItem;
  /** Usable as a generation's `image_url`. */
  url: string;
  sha256: string;
  mime: string;
  bytes: number;
  width: number;
  height: number;
  /** True when an earlier upload of the same bytes to this service was reused. */
  deduplicated: boolean;
  resized: boolean;
}

export interface UploaderOptions {
  api: ApiClient;
  dedup?: UploadDedupStore;
  /**
   * What names the service in the dedup store across runs; default its base URL. The embedded
   * engine listens on a new port each run, so its callers name it by its data folder instead.
   */
  serviceKey?: string;
  ffmpegPath?: string;
  ffprobePath?: string;
  /** PUT attempts per upload (the first included). */
  maxPutAttempts?: number;
  sleep?: Sleep;
  random?: () => number;
  now?: () => number;
}

export interface Uploader {
  upload(source: UploadSource, options?: UploadOptions): Promise<UploadResult>;
}

const RESIZE_EXT: Readonly<Record<string, { ext: string; mime: string }>> = {
  'image/jpeg': { ext: 'jpg', mime: 'image/jpeg' },
  'image/png': { ext: 'png', mime: 'image/png' },
  'image/gif': { ext: 'png', mime: 'image/png' },
  'image/webp': { ext: 'png', mime: 'image/png' },
};

/**
 * Read size for hashing and sending. undici writes each chunk of a streamed body to the socket and
 * pauses the file until the socket drains, so every chunk costs a round of pause, thread-pool
 * read and resume: with 4 MiB chunks a 100 MB PUT took ~90-120 ms here, with 1 MiB or Node's
 * 64 KiB default 200-300 ms (curl -T: 75-90 ms). Two chunks at most are held in memory.
 */
const READ_CHUNK = 4 << 20;

/**
 * Files up to this size are hashed before anything is sent, so identical bytes under any name
 * are found in the dedup store before an upload (start frames, the common case, are images of at
 * most 20 MB and hash in a few tens of milliseconds). Larger files are hashed while they stream,
 * which saves a whole extra read of up to 100 MB; for those, dedup before sending relies on a
 * memo of (path, size, mtime) → hash from earlier uploads in this session.
 */
const HASH_FIRST_MAX_BYTES = CONTENT_LIMITS.uploadImageBytes;

async function sniffFile(path: string): Promise<Sniffed> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    const sniffed = sniffMime(head.subarray(0, bytesRead));
    if (!sniffed) {
      throw new ServiceError(
        'unsupported_media_type',
        'The file is not a PNG, JPEG, WebP or GIF image, nor an MP4, WebM or QuickTime video',
      );
    }
    return sniffed;
  } finally {
    await handle.close();
  }
}

async function hashFile(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { signal, highWaterMark: READ_CHUNK })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Streams the file to the signed URL, hashing what it sends; resolves to the sha256 sent. */
async function put(
  api: UploaderOptions['api'],
  ticket: UploadTicket,
  path: string,
  mime: string,
  size: number,
  opts: UploadOptions,
): Promise<string> {
  let sent = 0;
  const hash = createHash('sha256');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      sent += chunk.length;
      hash.update(chunk);
      opts.onProgress?.({ phase: 'uploading', sent, total: size });
      done(null, chunk);
    },
  });
  // pipeline, not pipe: a read error destroys `counter` with it, which fails the PUT, instead of
  // an unhandled 'error' on the file stream; the PUT's own failure is what the caller sees.
  const body = pipeline(createReadStream(path, { highWaterMark: READ_CHUNK }), counter, () => undefined);
  const res = await api.fetch(ticket.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': mime, ...ticket.headers, 'content-length': String(size) },
    body,
    auth: false,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const text = await res.body.text().catch(() => '');
  if (res.status >= 200 && res.status < 300) {
    if (sent !== size)
      throw new ServiceError(
        'invalid_request_error',
        `The file changed while it was uploading (${sent} of ${size} bytes sent)`,
      );
    return hash.digest('hex');
  }
  let message = `The upload was refused with HTTP ${res.status}`;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    // not JSON
  }
  // A refused upload ticket (401, 403, or 410 once it expired) is asked for again (below).
  const code =
    res.status === 401 || res.status === 403 || res.status === 410
      ? 'authentication_error'
      : res.status === 413
        ? 'payload_too_large'
        : res.status === 415
          ? 'unsupported_media_type'
          : res.status >= 500
            ? 'internal_error'
            : 'invalid_request_error';
  throw new ServiceError(code, message, { status: res.status });
}

/** What an upload has read of its file: where it is, its name, its type and its frame size. */
interface UploadFile {
  path: string;
  filename: string;
  sniffed: Sniffed;
  width: number;
  height: number;
}

/**
 * An image larger than the model's limit, scaled down with ffmpeg into the work folder; null when
 * no limit is asked for, the file is a video, or it fits.
 */
async function downsized(
  file: UploadFile,
  ctx: { work: string; options: UploaderOptions; upload: UploadOptions },
): Promise<(UploadFile & { size: number }) | null> {
  const { options, upload } = ctx;
  const { signal } = upload;
  const limit = upload.downsize;
  if (!limit || file.sniffed.kind !== 'image' || (file.width <= limit.maxWidth && file.height <= limit.maxHeight))
    return null;
  upload.onProgress?.({ phase: 'resizing', sent: 0, total: 0 });
  const target = RESIZE_EXT[file.sniffed.mime] ?? { ext: 'png', mime: 'image/png' };
  const out = join(ctx.work, `resized.${target.ext}`);
  await runFfmpeg(
    [
      '-y',
      '-i',
      file.path,
      '-vf',
      `scale=w=${limit.maxWidth}:h=${limit.maxHeight}:force_original_aspect_ratio=decrease`,
      '-frames:v',
      '1',
      out,
    ],
    { ...(signal ? { signal } : {}), ...(options.ffmpegPath ? { ffmpegPath: options.ffmpegPath } : {}) },
  );
  const after = await probe(out, options.ffprobePath ? { ffprobePath: options.ffprobePath } : {});
  return {
    path: out,
    width: after.width,
    height: after.height,
    size: (await stat(out)).size,
    sniffed: { mime: target.mime, kind: 'image' },
    filename: `${basename(file.filename, extname(file.filename))}.${target.ext}`,
  };
}

/** A PUT worth another try: a broken connection, a 5xx, or a refused (expired or spent) ticket. */
function retryablePut(error: unknown): boolean {
  const code = error instanceof ServiceError ? error.code : 'network_error';
  return code === 'network_error' || code === 'internal_error' || code === 'authentication_error';
}

/**
 * Sends the file on an upload ticket, asking for a fresh one when it is about to expire or was
 * refused; failures worth it are tried again through the one retry loop (core/api/retry.ts).
 * Answers the ticket used and the sha256 sent.
 */
async function sendOnTicket(
  ctx: { api: UploaderOptions['api']; now: () => number; retry: RetryDeps; maxPutAttempts: number },
  file: { path: string; filename: string; mime: string; size: number },
  opts: UploadOptions,
): Promise<{ ticket: UploadTicket; sent: string }> {
  const { api, now } = ctx;
  const { signal } = opts;
  // One budget for all of this upload's waits: the PUTs' and the client's inside each ticket request.
  const budget = opts.retryBudget ?? new RetryBudget(ctx.retry.policy.maxTotalWaitMs);
  const waits = { retryBudget: budget, ...(opts.onWait ? { onWait: opts.onWait } : {}), ...(signal ? { signal } : {}) };
  const ask = (): Promise<UploadTicket> =>
    api.requestUpload({ filename: file.filename, mime: file.mime, size: file.size }, waits);
  let ticket = await ask();
  let refused = false;
  // A ticket request the client gave up on is final: it has tried again already, within the budget.
  let asking = false;
  const options = {
    what: `the upload of ${file.filename}`,
    retryable: (error: unknown) => !asking && retryablePut(error),
    maxRetries: ctx.maxPutAttempts - 1,
    budget,
    ...(opts.onWait ? { onWait: opts.onWait } : {}),
    ...(signal ? { signal } : {}),
  };
  return retrying(ctx.retry, options, async () => {
    // A refused signature means the URL expired (or was spent): ask for a fresh one. A ticket
    // without `expiresAt` (another service's) is used at once.
    if (refused || (ticket.expiresAt !== undefined && Date.parse(ticket.expiresAt) <= now() + 2_000)) {
      asking = true;
      ticket = await ask();
      asking = false;
    }
    try {
      return { ticket, sent: await put(api, ticket, file.path, file.mime, file.size, opts) };
    } catch (error) {
      if (signal?.aborted) throw new ServiceError('canceled', 'The upload was cancelled', { cause: error });
      refused = error instanceof ServiceError && error.code === 'authentication_error';
      throw error;
    }
  });
}

export function createUploader(options: UploaderOptions): Uploader {
  const { api } = options;
  const dedup = options.dedup ?? createMemoryDedupStore();
  const maxPutAttempts = Math.max(1, options.maxPutAttempts ?? 4);
  const retry: RetryDeps = {
    policy: DEFAULT_RETRY_POLICY,
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
  };
  const now = options.now ?? Date.now;
  const serviceKey = options.serviceKey ?? api.baseUrl;

  /**
   * An earlier upload of the same bytes, as the service describes it now: its URL may have been
   * signed anew or moved to another port since it was stored, and retention may have deleted it
   * (then it is uploaded again).
   */
  async function knownUpload(sha256: string, signal: AbortSignal | undefined): Promise<MediaItem | null> {
    const stored = await dedup.get(serviceKey, sha256);
    if (!stored) return null;
    try {
      return await api.getMedia(stored.id, signal ? { signal } : {});
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'not_found_error') return null;
      throw error;
    }
  }

  /** sha256 of files hashed while streaming, by identity, so a repeat is found before sending. */
  const hashByIdentity = new Map<string, string>();

  async function upload(source: UploadSource, opts: UploadOptions = {}): Promise<UploadResult> {
    const { signal } = opts;
    const work = await mkdtemp(join(tmpdir(), 'clipdesk-upload-'));
    try {
      let path: string;
      let filename: string;
      if ('buffer' in source) {
        filename = basename(source.filename);
        path = join(work, `input-${randomBytes(4).toString('hex')}${extname(filename)}`);
        await writeFile(path, source.buffer);
      } else {
        path = source.path;
        filename = basename(source.filename ?? source.path);
      }
      opts.onProgress?.({ phase: 'checking', sent: 0, total: 0 });
      const info = await stat(path).catch(() => null);
      if (!info?.isFile()) throw new ServiceError('invalid_request_error', `No such file: ${path}`);
      if (info.size === 0) throw new ServiceError('invalid_request_error', `The file is empty: ${filename}`);
      let sniffed: Sniffed = await sniffFile(path);
      const facts = await probe(path, {
        signal,
        ...(options.ffprobePath ? { ffprobePath: options.ffprobePath } : {}),
      }).catch((error: unknown) => {
        throw new ServiceError(
          'unsupported_media_type',
          `The file could not be read as ${sniffed.mime}: ${(error as Error).message.split('\n')[0]}`,
        );
      });
      if (!facts.hasVideo || facts.width === 0 || facts.height === 0) {
        throw new ServiceError('unsupported_media_type', `The file has no picture: ${filename}`);
      }
      let { width, height } = facts;
      let size = info.size;
      const smaller = await downsized({ path, filename, sniffed, width, height }, { work, options, upload: opts });
      const resized = smaller !== null;
      if (smaller) ({ path, filename, sniffed, width, height, size } = smaller);
      const max = sniffed.kind === 'image' ? CONTENT_LIMITS.uploadImageBytes : CONTENT_LIMITS.uploadVideoBytes;
      if (size > max) {
        throw new ServiceError(
          'payload_too_large',
          `${filename} is ${(size / 1e6).toFixed(1)} MB; the service takes ${sniffed.kind}s up to ${max / 1e6} MB`,
        );
      }

      const identity = `${path}|${size}|${(await stat(path)).mtimeMs}`;
      let sha256 = hashByIdentity.get(identity) ?? null;
      if (sha256 === null && size <= HASH_FIRST_MAX_BYTES) {
        opts.onProgress?.({ phase: 'hashing', sent: 0, total: size });
        sha256 = await hashFile(path, signal);
      }
      const known = sha256 === null ? null : await knownUpload(sha256, signal);
      const result = (item: MediaItem, deduplicated: boolean, digest: string): UploadResult => ({
        item,
        url: item.url,
        sha256: digest,
        mime: sniffed.mime,
        bytes: size,
        width,
        height,
        deduplicated,
        resized,
      });
      if (known && sha256 !== null) {
        opts.onProgress?.({ phase: 'done', sent: size, total: size });
        return result(known, true, sha256);
      }

      const { ticket, sent } = await sendOnTicket(
        { api, now, retry, maxPutAttempts },
        { path, filename, mime: sniffed.mime, size },
        opts,
      );
      opts.onProgress?.({ phase: 'completing', sent: size, total: size });
      if (sha256 !== null && sent !== sha256) {
        throw new ServiceError('invalid_request_error', `${filename} changed while it was uploading; try again`);
      }
      const item = await api.completeUpload(ticket.id, signal ? { signal } : {});
      if (!('buffer' in source)) hashByIdentity.set(identity, sent);
      await dedup.put(serviceKey, sent, item);
      opts.onProgress?.({ phase: 'done', sent: size, total: size });
      return result(item, false, sent);
    } catch (error) {
      if (signal?.aborted && !(error instanceof ServiceError && error.code === 'canceled')) {
        throw new ServiceError('canceled', 'The upload was cancelled', { cause: error });
      }
      throw error;
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  return { upload };
}
