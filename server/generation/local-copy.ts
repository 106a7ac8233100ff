import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../storage/blobs/index.ts';
import { BlobNotFoundError } from '../storage/blobs/index.ts';

/**
 * A stored file as a local path, for ffmpeg and ffprobe, which open files themselves: on disk the
 * file itself (read in place, as before the blob store); from a bucket a copy in `workDir`, which
 * the caller's work directory cleanup removes. BlobNotFoundError when there is no such blob.
 */
export async function localFile(
  store: BlobStore,
  key: string,
  workDir: string,
  name: string,
  signal?: AbortSignal,
): Promise<string> {
  if (store.localPath) {
    const path = store.localPath(key);
    // The same answer a bucket gives for a missing file, rather than ffmpeg's.
    if (!(await store.head(key))) throw new BlobNotFoundError(key);
    return path;
  }
  const path = join(workDir, name);
  const read = await store.get(key);
  try {
    await pipeline(read.stream, createWriteStream(path), ...(signal ? [{ signal }] : []));
  } catch (error) {
    await rm(path, { force: true });
    throw error;
  }
  return path;
}
