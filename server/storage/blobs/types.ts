import type { Readable } from 'node:stream';

/**
 * Where the service keeps its files: a key → bytes store, on the data directory's disk (the
 * embedded default) or in an S3-compatible bucket (teams, several nodes). Everything the service
 * does with files goes through this: the pipeline's finished items (put a file), upload bodies
 * (put a stream with the signed size as the limit), file serving (get with a Range, head),
 * retention (delete), the reconcile command (list by prefix), and redirects to the bucket
 * (a presigned GET, where the store has one).
 *
 * Keys mirror today's layout (server/storage/layout.ts): `media/<mediaId>/<file>` and
 * `uploads/<uploadId>/put-<putId>` (`uploads/<uploadId>/data` before); see keys.ts for what a key
 * may contain.
 */
export interface BlobStore {
  readonly kind: 'disk' | 's3';
  /** Where, for messages and logs: `disk:DIR` or `s3://BUCKET/PREFIX` (never credentials or endpoints' secrets). */
  readonly location: string;
  /** Resolves when the store answers (the bucket exists and the credentials reach it); readiness and startup. */
  check(): Promise<void>;
  /**
   * Stores a local file under `key`. With `removeSource` the file is moved (on disk a rename when
   * it can be) and is gone afterwards; otherwise it is copied and left as it was.
   */
  putFile(key: string, path: string, options: PutFileOptions): Promise<BlobInfo>;
  /**
   * Stores what `source` yields under `key`, counting while it streams: past `maxBytes` it stops
   * at once with BlobTooLargeError. Whatever fails (the limit, the source erroring, the signal),
   * nothing is left under `key` or anywhere else in the store. Never buffers the whole stream.
   */
  putStream(key: string, source: Readable, options: PutStreamOptions): Promise<BlobInfo>;
  /** A stream of the blob, or of the range asked for; BlobNotFoundError, BlobRangeError. The caller consumes or destroys it. */
  get(key: string, options?: { range?: BlobRange }): Promise<BlobRead>;
  /** Size and type, or null when there is no such blob. */
  head(key: string): Promise<BlobInfo | null>;
  /**
   * Puts the blob at `from` under `to` and removes `from` (an upload completed into its media
   * item): on disk a rename, nothing copied; on S3 a server-side copy, then a delete. Afterwards
   * `to` is whole or absent; BlobNotFoundError when `from` is missing. Should the delete of `from`
   * fail after the copy, `from` stays (retention or fsck removes it) and the move still succeeds.
   */
  move(from: string, to: string, options: { contentType: string }): Promise<BlobInfo>;
  /**
   * Disk only: the file that holds the blob, for tools that open files themselves (ffprobe,
   * ffmpeg), so the one-machine service reads in place. Stores without one (S3) are read into a
   * local temp file first (server/generation/local-copy.ts).
   */
  localPath?(key: string): string;
  /** Removes the blob; a missing one is not an error (retention and fsck may race). */
  delete(key: string): Promise<void>;
  /** Every blob whose key starts with `prefix` (a plain string prefix, as in S3), in no promised order. */
  list(prefix: string): AsyncIterable<BlobInfo>;
  /**
   * A URL that GETs the blob without credentials until it expires, for stores that have them
   * (S3); absent on disk, where the service signs its own `/v1/files` URLs.
   */
  presignGet?(key: string, options: PresignOptions): Promise<string>;
}

export interface BlobInfo {
  key: string;
  size: number;
  /** S3 keeps the type given at put; disk derives it from the key's extension (null when unknown, and in `list`). */
  contentType: string | null;
  /** When it was last written (ms since the epoch); given by `list`, for fsck's minimum age. */
  modifiedMs?: number;
}

export interface PutFileOptions {
  contentType: string;
  removeSource?: boolean;
}

export interface PutStreamOptions {
  contentType: string;
  /** The most bytes accepted; one more fails with BlobTooLargeError (the 20 MB and 100 MB upload limits). */
  maxBytes: number;
  /** Gives up as if the source had failed: nothing is stored. */
  signal?: AbortSignal;
}

/** A byte range as HTTP's Range header names one: `start-[end]` (end inclusive) or the last `suffix` bytes. */
export type BlobRange = { start: number; end?: number } | { suffix: number };

export interface BlobRead {
  stream: Readable;
  /** The blob's whole size (for Content-Range). */
  size: number;
  /** The bytes the stream carries, inclusive; the whole blob (0…size-1) without a range. */
  start: number;
  end: number;
  /** Whether a range was asked for and applied (206 rather than 200). */
  partial: boolean;
  contentType: string | null;
}

export interface PresignOptions {
  expiresInSeconds: number;
  /** The Content-Type and Content-Disposition the store answers with. */
  contentType?: string;
  disposition?: string;
}

/** A key outside the rules of keys.ts (traversal, control characters, unknown area). */
export class BlobKeyError extends Error {
  override name = 'BlobKeyError';
}

export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
  readonly key: string;
  constructor(key: string) {
    super(`no stored file ${key}`);
    this.key = key;
  }
}

/** The stream passed `maxBytes`: nothing was stored. */
export class BlobTooLargeError extends Error {
  override name = 'BlobTooLargeError';
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`more than the ${maxBytes} bytes allowed; nothing was stored`);
    this.maxBytes = maxBytes;
  }
}

/** The range starts past the end of the blob (HTTP 416, `Content-Range: bytes *\/size`). */
export class BlobRangeError extends Error {
  override name = 'BlobRangeError';
  readonly size: number;
  constructor(size: number) {
    super(`range not satisfiable (the file has ${size} bytes)`);
    this.size = size;
  }
}

/** A range against a known size, as serve-file answers it: null = unsatisfiable. */
export function resolveRange(range: BlobRange, size: number): { start: number; end: number } | null {
  if ('suffix' in range) {
    if (!Number.isSafeInteger(range.suffix) || range.suffix <= 0 || size === 0) return null;
    return { start: Math.max(0, size - range.suffix), end: size - 1 };
  }
  const { start } = range;
  const end = range.end === undefined ? size - 1 : Math.min(range.end, size - 1);
  if (!Number.isSafeInteger(start) || start < 0 || start >= size || end < start) return null;
  return { start, end };
}
