import type { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createFileWriter } from '../../../shared/node/file-writer.ts';
import type { FileWriter } from '../../../shared/node/file-writer.ts';
import type { RawResponse } from '../api/client-types.ts';

/** What we remember beside a `.part` to resume it safely. */
export interface PartMeta {
  validator: string | null;
  total: number | null;
}

export function header(res: RawResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A validator usable in If-Range: a strong ETag, else Last-Modified. */
export function validatorOf(res: RawResponse): string | null {
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

export async function hashFile(path: string, hash: ReturnType<typeof createHash>): Promise<void> {
  for await (const chunk of createReadStream(path, { highWaterMark: WRITE_BATCH_BYTES })) hash.update(chunk as Buffer);
}

export async function readMeta(path: string): Promise<PartMeta | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as PartMeta;
  } catch {
    return null;
  }
}

export async function syncDir(dir: string): Promise<void> {
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
