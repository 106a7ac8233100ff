import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import { createFileWriter } from '../../../shared/node/file-writer.ts';
import type { FileWriter } from '../../../shared/node/file-writer.ts';
import type { GeneratedItem, MediaItem } from '../../../shared/api/index.ts';
import { ServiceError, errorCodeFor } from '../api/errors.ts';
import type { ApiClient, RawResponse } from '../api/client-types.ts';
import { backoffDelay, DEFAULT_RETRY_POLICY, realSleep } from '../api/retry.ts';
import type { Sleep } from '../api/retry.ts';
import { DEFAULT_NAMING_PATTERN, extensionFor, renderPattern, resolveInside } from './naming.ts';

export type DownloadableItem = MediaItem | GeneratedItem;

/** Facts the item itself does not carry but the sidecar records (from the generation response). */
export interface DownloadContext {
  routing?: string;
  price?: number;
  sourceImage?: string;
  [extra: string]: unknown;
}

export interface DownloadProgress {
  id: string;
  path: string;
  received: number;
  total: number | null;
}

export interface DownloadRequest {
  item: DownloadableItem;
  /** Overrides the manager's root for this download. */
  dir?: string;
  /** A MIME type from `item.formats`; default the item's own. */
  format?: string;
  context?: DownloadContext;
  signal?: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * Download anew even when the target file exists ("Download again"): the fresh copy replaces it
   * only once complete and verified, so a failed attempt leaves the old copy in place.
   */
  replace?: boolean;
}

export interface DownloadResult {
  id: string;
  path: string;
  sidecarPath: string;
  bytes: number;
  sha256: string;
  /** 'content' = the authenticated endpoint (the service marks the item downloaded). */
  source: 'content' | 'url' | 'existing';
  /** How many times an interrupted transfer was resumed. */
  resumes: number;
}

export interface DownloadManagerOptions {
  api: ApiClient;
  /** Root folder of downloads. */
  dir: string;
  pattern?: string;
  /** Downloads running at once; the rest wait in order. */
  concurrency?: number;
  /** Attempts per download (the first included) when the connection breaks. */
  maxAttempts?: number;
  sleep?: Sleep;
  random?: () => number;
}

export interface DownloadManager {
  download(request: DownloadRequest): Promise<DownloadResult>;
  /** Absolute target path of an item (what `download` would write). */
  pathFor(item: DownloadableItem, options?: { dir?: string; format?: string }): string;
  onProgress(listener: (progress: DownloadProgress) => void): () => void;
  readonly active: number;
  readonly queued: number;
  dispose(): Promise<void>;
}

/** What we remember beside a `.part` to resume it safely. */
interface PartMeta {
  validator: string | null;
  total: number | null;
}

function header(res: RawResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A validator usable in If-Range: a strong ETag, else Last-Modified. */
function validatorOf(res: RawResponse): string | null {
  const etag = header(res, 'etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return header(res, 'last-modified') ?? null;
}

/** Size of each disk write while downloading. */
const WRITE_BATCH_BYTES = 1 << 20;
/** Bytes written between early write-backs (fdatasync while the body still streams). */
const WRITE_BACK_BYTES = 8 << 20;

/**
 * How a download writes its part: chunks gathered into ~1 MiB writes with one write in flight, so
 * receiving the next batch overlaps with the disk, and write-back starting every few MiB while the
 * body streams, so the fsync before the rename has only the tail left.
 */
export function createPartWriter(handle: FileHandle): FileWriter {
  return createFileWriter(handle, { batchBytes: WRITE_BATCH_BYTES, writeBackEveryBytes: WRITE_BACK_BYTES });
}

async function hashFile(path: string, hash: ReturnType<typeof createHash>): Promise<void> {
  for await (const chunk of createReadStream(path, { highWaterMark: WRITE_BATCH_BYTES })) hash.update(chunk as Buffer);
}

async function failureFrom(res: RawResponse): Promise<ServiceError> {
  const text = await res.body.text().catch(() => '');
  let message = `Download failed with HTTP ${res.status}`;
  let code: string | undefined;
  try {
    const body = JSON.parse(text) as { message?: unknown; code?: unknown };
    if (typeof body.message === 'string') message = body.message;
    if (typeof body.code === 'string') code = body.code;
  } catch {
    // not a JSON error body
  }
  return new ServiceError(errorCodeFor(res.status, code), message, { status: res.status });
}

function pickFormat(item: DownloadableItem, format?: string): { mime: string; url: string } {
  if (format && format !== item.mime) {
    const f = item.formats?.find((x) => x.mime === format);
    if (!f) throw new ServiceError('invalid_request_error', `Item ${item.id} has no ${format} rendition`);
    return { mime: f.mime, url: f.url };
  }
  return { mime: item.mime, url: item.url };
}

/** At most `concurrency` transfers at once; the others wait in order (a canceled one leaves the line). */
function createSlots(concurrency: number) {
  const waiting: Array<() => void> = [];
  let active = 0;
  return {
    get active() {
      return active;
    },
    get queued() {
      return waiting.length;
    },
    async acquire(signal?: AbortSignal): Promise<void> {
      if (active < concurrency) {
        active++;
        return;
      }
      await new Promise<void>((resolve, reject) => {
        const go = (): void => {
          signal?.removeEventListener('abort', onAbort);
          active++;
          resolve();
        };
        const onAbort = (): void => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          reject(new ServiceError('canceled', 'The download was cancelled'));
        };
        waiting.push(go);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    release(): void {
      active--;
      waiting.shift()?.();
    },
  };
}

/**
 * The item's own URL. Signed URLs expire (a private item's, after the service's TTL): on a 403
 * or 404 the item is fetched again (`GET /media/:id`, whose URLs are signed anew) and the request
 * is retried once with the fresh URL, which later attempts of this download keep using.
 */
async function fetchItemUrl(
  api: DownloadManagerOptions['api'],
  current: { item: DownloadableItem },
  format: string | undefined,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<RawResponse> {
  const { url } = pickFormat(current.item, format);
  const res = await api.fetch(url, { headers, signal });
  if (res.status !== 403 && res.status !== 404) return res;
  const refused = await failureFrom(res);
  let fresh: MediaItem;
  try {
    fresh = await api.getMedia(current.item.id, { signal });
  } catch (error) {
    // The item is gone (or the service cannot say): the first answer is the one to report.
    if (error instanceof ServiceError && error.code === 'not_found_error') throw error;
    throw refused;
  }
  const next = pickFormat(fresh, format).url;
  current.item = fresh;
  return api.fetch(next, { headers, signal });
}

/**
 * Opens an item's content: `GET /media/:id/content` (extension) while the service has it, else the
 * item's own URL. Learned on the first try: null = unknown, false = the service has no content endpoint.
 */
function createContentOpener(api: DownloadManagerOptions['api']) {
  let contentEndpoint: boolean | null = null;
  return async function open_(
    current: { item: DownloadableItem },
    format: string | undefined,
    headers: Record<string, string>,
    signal: AbortSignal,
  ) {
    const { item } = current;
    if (contentEndpoint !== false) {
      const res = await api.openMediaContent(item.id, {
        headers,
        signal,
        ...(format && format !== item.mime ? { format } : {}),
      });
      if (![404, 405, 501].includes(res.status) || contentEndpoint === true) {
        if (res.status < 300 || res.status === 416) contentEndpoint = true;
        return { res, source: 'content' as const };
      }
      // Another implementation without the extension: fall back to the item's URL.
      await res.body.dump();
      contentEndpoint = false;
    }
    return { res: await fetchItemUrl(api, current, format, headers, signal), source: 'url' as const };
  };
}

/** One attempt's answer to a download request, from `res` to the file in place with its sidecar. */
interface Receiving {
  res: RawResponse;
  source: 'content' | 'url';
  /** Bytes already in the part file (a resume asked for the rest). */
  offset: number;
  req: DownloadRequest;
  /** The item as last seen (its URLs renewed when they had expired). */
  current: { item: DownloadableItem };
  target: string;
  sidecarPath: string;
  part: string;
  metaPath: string;
  emit: (received: number, total: number | null) => void;
  counts: { resumes: number };
}

async function receive(r: Receiving): Promise<DownloadResult> {
  const { res, source, offset, req, current, target, sidecarPath, part, metaPath, emit } = r;
  const { item } = req;
  let handle: FileHandle | null = null;
  try {
    let start: number;
    let total: number | null;
    if (res.status === 206 && offset > 0) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header(res, 'content-range') ?? '');
      if (!m || Number(m[1]) !== offset) {
        await res.body.dump();
        await rm(part, { force: true });
        throw new Error('The server resumed at the wrong offset');
      }
      start = offset;
      total = m[3] === '*' ? null : Number(m[3]);
      r.counts.resumes++;
    } else if (res.status === 200) {
      start = 0;
      const len = Number(header(res, 'content-length'));
      total = Number.isFinite(len) && header(res, 'content-length') !== undefined ? len : null;
    } else if (res.status === 416 && offset > 0) {
      // Our part is already complete or stale: start over.
      await res.body.dump();
      await rm(part, { force: true });
      throw new Error('The server refused the resume range');
    } else {
      throw await failureFrom(res);
    }
    // What a resume needs is written beside the part while the body streams: a part without
    // it (a crash before it landed) is simply downloaded again from the start.
    const metaWritten = atomicWriteFile(
      metaPath,
      JSON.stringify({ validator: validatorOf(res), total } satisfies PartMeta),
    );
    metaWritten.catch(() => undefined);

    const hash = createHash('sha256');
    if (start > 0) await hashFile(part, hash);
    handle = await open(part, start > 0 ? 'a' : 'w');
    let received = start;
    emit(received, total);
    // Hashing each chunk here overlaps with the write of the batch before it.
    const writer = createPartWriter(handle);
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        hash.update(buf);
        received += buf.length;
        const full = writer.push(buf);
        if (full) await full;
        emit(received, total);
      }
    } finally {
      // Also when the connection breaks: every byte received is kept in the part, to resume from.
      await writer.flush();
      await metaWritten;
    }
    try {
      await writer.finish();
    } catch (error) {
      // A failed fsync means written pages may never reach the disk, while the page cache
      // still shows them (and a new descriptor would not hear of the error): resuming from
      // this part could make a file that is complete only until the next reboot.
      await handle.close().catch(() => undefined);
      handle = null;
      await rm(part, { force: true });
      await rm(metaPath, { force: true });
      throw error;
    }
    await handle.close();
    handle = null;

    for (const expected of [total, expectedBytes(item, req.format)]) {
      if (expected !== null && received !== expected) {
        await rm(part, { force: true });
        throw new ServiceError('invalid_response', `Downloaded ${received} bytes of ${item.id}, expected ${expected}`);
      }
    }
    const sha256 = hash.digest('hex');
    const known = knownSha256(item, res);
    if (known && known !== sha256) {
      await rm(part, { force: true });
      throw new ServiceError('invalid_response', `The download of ${item.id} does not match its sha256`);
    }
    await rename(part, target);
    await syncDir(dirname(target));
    await rm(metaPath, { force: true });
    await atomicWriteFile(
      sidecarPath,
      `${JSON.stringify(sidecar(current.item, req.context, sha256, received, source), null, 2)}\n`,
    );
    return { id: item.id, path: target, sidecarPath, bytes: received, sha256, source, resumes: r.counts.resumes };
  } catch (error) {
    if (handle) await handle.close().catch(() => undefined);
    throw error;
  }
}

export function createDownloadManager(options: DownloadManagerOptions): DownloadManager {
  const { api } = options;
  const pattern = options.pattern ?? DEFAULT_NAMING_PATTERN;
  const concurrency = Math.max(1, options.concurrency ?? 3);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 6);
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const listeners = new Set<(p: DownloadProgress) => void>();
  const slots = createSlots(concurrency);
  const open_ = createContentOpener(api);

  function pathFor(item: DownloadableItem, opts: { dir?: string; format?: string } = {}): string {
    const { mime, url } = pickFormat(item, opts.format);
    const rel = renderPattern(pattern, {
      id: item.id,
      model: item.model,
      provider: item.provider,
      media: item.media,
      createdAt: item.createdAt,
      ext: extensionFor(mime, url),
    });
    return resolveInside(opts.dir ?? options.dir, rel);
  }

  /** Where a request's file goes. */
  function targetOf(req: DownloadRequest): string {
    return pathFor(req.item, { ...(req.dir ? { dir: req.dir } : {}), ...(req.format ? { format: req.format } : {}) });
  }

  async function transfer(req: DownloadRequest, signal: AbortSignal): Promise<DownloadResult> {
    const { item } = req;
    const target = targetOf(req);
    const sidecarPath = `${target}.json`;
    const part = `${target}.part`;
    const metaPath = `${part}.json`;
    await mkdir(dirname(target), { recursive: true });

    const existing = req.replace === true ? null : await stat(target).catch(() => null);
    if (existing?.isFile()) {
      const hash = createHash('sha256');
      await hashFile(target, hash);
      const sha256 = hash.digest('hex');
      return { id: item.id, path: target, sidecarPath, bytes: existing.size, sha256, source: 'existing', resumes: 0 };
    }

    const emit = (received: number, total: number | null): void => {
      const p = { id: item.id, path: target, received, total };
      req.onProgress?.(p);
      for (const l of listeners) l(p);
    };

    const counts = { resumes: 0 };
    let lastError: unknown;
    /** The item as last seen: its URLs are replaced when they have expired. */
    const current = { item };
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      if (attempt > 0) await sleep(backoffDelay(attempt - 1, DEFAULT_RETRY_POLICY, random), signal);
      const offset = (await stat(part).catch(() => null))?.size ?? 0;
      const meta = offset > 0 ? await readMeta(metaPath) : null;
      const headers: Record<string, string> = {};
      if (offset > 0 && meta?.validator) {
        headers['range'] = `bytes=${offset}-`;
        headers['if-range'] = meta.validator;
      }
      try {
        const { res, source } = await open_(current, req.format, headers, signal);
        return await receive({
          res,
          source,
          offset,
          req,
          current,
          target,
          sidecarPath,
          part,
          metaPath,
          emit,
          counts,
        });
      } catch (error) {
        if (signal.aborted) throw new ServiceError('canceled', 'The download was cancelled', { cause: error });
        // Service answers (not found, auth …) are final; broken connections are resumed.
        if (error instanceof ServiceError && error.code !== 'network_error' && error.code !== 'internal_error')
          throw error;
        lastError = error;
      }
    }
    if (lastError instanceof ServiceError) throw lastError;
    throw new ServiceError(
      'network_error',
      `The download of ${item.id} kept failing: ${String((lastError as Error)?.message ?? lastError)}`,
      {
        cause: lastError,
      },
    );
  }

  /**
   * The transfer writing each target now. Two downloads of one file (a library download still
   * resuming while "Download again" starts) would both resume from one part file and append the
   * same bytes twice: the second waits for the first, then finds the file (or replaces it).
   */
  const writing = new Map<string, Promise<unknown>>();
  async function oneWriterAt<T>(target: string, run: () => Promise<T>): Promise<T> {
    for (let busy = writing.get(target); busy; busy = writing.get(target)) await busy.catch(() => undefined);
    const running = run();
    writing.set(target, running);
    try {
      return await running;
    } finally {
      if (writing.get(target) === running) writing.delete(target);
    }
  }

  /**
   * Downloads not yet settled, each with what aborts it: dispose aborts them and waits for them, so
   * that none still writes afterwards.
   */
  const running = new Map<Promise<unknown>, AbortController>();

  return {
    download(req) {
      const controller = new AbortController();
      const signal = req.signal ? AbortSignal.any([req.signal, controller.signal]) : controller.signal;
      const run = oneWriterAt(targetOf(req), async () => {
        await slots.acquire(signal);
        try {
          return await transfer(req, signal);
        } finally {
          slots.release();
        }
      });
      running.set(run, controller);
      const forget = (): void => void running.delete(run);
      run.then(forget, forget);
      return run;
    },
    pathFor,
    onProgress(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get active() {
      return slots.active;
    },
    get queued() {
      return slots.queued;
    },
    async dispose() {
      for (const controller of running.values()) controller.abort();
      listeners.clear();
      // Aborted downloads still close and remove their partial files: done before the caller
      // closes the library or removes the folder under them.
      await Promise.allSettled([...running.keys()]);
    },
  };
}

async function readMeta(path: string): Promise<PartMeta | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PartMeta;
  } catch {
    return null;
  }
}

async function syncDir(dir: string): Promise<void> {
  // Makes the rename durable; not every platform lets a directory be opened (Windows).
  try {
    const h = await open(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  } catch {
    // best effort
  }
}

function expectedBytes(item: DownloadableItem, format: string | undefined): number | null {
  // Only a rendition's own size is trusted: an item's `bytes` may count every rendition.
  const mime = format ?? item.mime;
  return item.formats?.find((f) => f.mime === mime)?.bytes ?? null;
}

function knownSha256(item: DownloadableItem, res: RawResponse): string | null {
  const fromItem = (item as Record<string, unknown>)['sha256'];
  if (typeof fromItem === 'string' && /^[0-9a-f]{64}$/i.test(fromItem)) return fromItem.toLowerCase();
  const fromHeader = header(res, 'x-content-sha256');
  if (fromHeader && /^[0-9a-f]{64}$/i.test(fromHeader)) return fromHeader.toLowerCase();
  return null;
}

function sidecar(
  item: DownloadableItem,
  context: DownloadContext | undefined,
  sha256: string,
  bytes: number,
  source: string,
) {
  const i = item as Record<string, unknown>;
  return {
    id: item.id,
    prompt: item.prompt,
    model: item.model,
    modelSlug: i['modelSlug'] ?? null,
    provider: item.provider,
    providerName: i['providerName'] ?? null,
    routing: context?.routing ?? i['routing'] ?? null,
    price: context?.price ?? item.price ?? null,
    sourceImage: context?.sourceImage ?? i['image_url'] ?? i['sourceImage'] ?? null,
    media: item.media,
    mime: item.mime,
    size: item.size,
    duration: item.duration,
    width: item.width ?? null,
    height: item.height ?? null,
    createdAt: item.createdAt,
    url: item.url,
    sha256,
    bytes,
    source,
    downloadedAt: new Date().toISOString(),
    ...(context
      ? Object.fromEntries(Object.entries(context).filter(([k]) => !['routing', 'price', 'sourceImage'].includes(k)))
      : {}),
  };
}
