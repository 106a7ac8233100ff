import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { z } from 'zod';
import { isBlobKey } from '../blobs/index.ts';

/**
 * The bundle `clipdesk-service export` writes and `import` reads: a directory, streamed file by
 * file, never held in memory.
 *
 *   manifest.json          written last: its presence says the export finished (MANIFEST below)
 *   secret.key             the URL signing secret (hex), owner-only
 *   rows/<table>.ndjson    one row per line, a JSON array of the manifest's columns
 *   files.ndjson           one stored file per line: {key, size, sha256, contentType}
 *   files/<key>            the file stored under `key` (media/<id>/<file>, uploads/<id>/put-<put>, or
 *                          uploads/<id>/data for uploads received before their row named the key)
 *
 * The manifest holds each table's row count and the sha256 of its rows file, and the count, byte
 * total and sha256 of files.ndjson, which holds each file's sha256: every byte of the bundle is
 * covered by a hash the manifest pins. The bundle holds the signing secret, hashed API keys and
 * sealed webhook secrets: it is as private as the data directory, and made owner-only (0700).
 */
export const BUNDLE_FORMAT = 'clipdesk-service-bundle';
export const BUNDLE_VERSION = 1;

export const MANIFEST_FILE = 'manifest.json';
export const SECRET_FILE = 'secret.key';
export const FILE_INDEX = 'files.ndjson';

export const rowsPath = (bundle: string, table: string): string => join(bundle, 'rows', `${table}.ndjson`);
export const filePath = (bundle: string, key: string): string => join(bundle, 'files', ...key.split('/'));

const SHA256 = z.string().regex(/^[0-9a-f]{64}$/);
const COUNT = z.number().int().nonnegative();

export const MANIFEST = z.object({
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(BUNDLE_VERSION),
  createdAt: z.string(),
  source: z.object({ database: z.string(), storage: z.string(), schemaVersion: COUNT }),
  tables: z.array(
    z.object({
      name: z.string().regex(/^[a-z_]+$/),
      columns: z.array(z.string().regex(/^[a-z_][a-z0-9_]*$/)).min(1),
      rows: COUNT,
      sha256: SHA256,
    }),
  ),
  files: z.object({ count: COUNT, bytes: COUNT, sha256: SHA256 }),
  /** The secret's sha256 (it is 32 random bytes: the hash reveals nothing); null when the source had none. */
  secret: z.object({ sha256: SHA256 }).nullable(),
  /** Providers whose keys were set in the source's data directory (`providers set-key`): names only, never keys. */
  providersWithKeys: z.array(z.string()),
});
export type Manifest = z.infer<typeof MANIFEST>;

export const FILE_ENTRY = z.object({
  key: z.string().refine(isBlobKey, 'not a storage key'),
  size: COUNT,
  sha256: SHA256,
  contentType: z.string().nullable(),
});
export type FileEntry = z.infer<typeof FILE_ENTRY>;

/** A damaged or incomplete bundle: import refuses it, having changed nothing it cannot undo. */
export class BundleError extends Error {
  override name = 'BundleError';
}

/** Passes bytes through while hashing and counting them. */
export class HashTap extends Transform {
  private readonly hash: Hash = createHash('sha256');
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * Passes bytes through and fails at the end unless they are exactly `size` bytes hashing to
 * `sha256`: a store putting from it stores nothing when they do not (BlobStore.putStream).
 */
export class HashCheck extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;
  private readonly expected: { size: number; sha256: string; what: string };

  constructor(expected: { size: number; sha256: string; what: string }) {
    super();
    this.expected = expected;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expected.size) {
      done(new BundleError(`${this.expected.what} is longer than the ${this.expected.size} bytes the bundle lists`));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    const { size, sha256, what } = this.expected;
    if (this.bytes !== size) done(new BundleError(`${what} has ${this.bytes} bytes; the bundle lists ${size}`));
    else if (this.hash.digest('hex') !== sha256)
      done(new BundleError(`${what} does not match its sha256 in the bundle (damaged or changed since the export)`));
    else done();
  }
}

/**
 * The lines of a file, read as a stream (a rows file or the file index may be large), with the
 * sha256 of all its bytes once the last line is out. Async iteration destroys the stream when the
 * consumer stops, and a read error throws here.
 */
export async function* readLines(path: string, hash: Hash): AsyncGenerator<string> {
  let carry = '';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    const text = carry + decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    carry = lines.pop() ?? '';
    for (const line of lines) yield line;
  }
  carry += decoder.decode();
  if (carry !== '') yield carry;
}

/** The sha256 and line count of a file, streamed; a missing file is a BundleError naming it. */
export async function hashLines(path: string, what: string): Promise<{ sha256: string; lines: number }> {
  const hash = createHash('sha256');
  let lines = 0;
  try {
    for await (const _line of readLines(path, hash)) lines++;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BundleError(`${what} is missing from the bundle`);
    throw new BundleError(`${what} cannot be read: ${(error as Error).message}`);
  }
  return { sha256: hash.digest('hex'), lines };
}
