import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Dirent } from 'node:fs';
import { access, copyFile, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mimeForName } from '../file-types.ts';
import { BLOB_AREAS, checkBlobKey, checkBlobPrefix } from './blob-keys.ts';
import { ByteLimit } from './limit.ts';
import type { BlobInfo, BlobRange, BlobRead, BlobStore, PutFileOptions, PutStreamOptions } from './types.ts';
import { BlobNotFoundError, BlobRangeError, resolveRange } from './types.ts';

/** Read size when streaming a file out (see server/http/serve-file.ts for why 1 MiB). */
const READ_BYTES = 1 << 20;
/** Write size for incoming streams: fewer trips through the thread pool (see upload-receive.ts). */
const WRITE_BYTES = 4 << 20;

/**
 * The data directory's own layout (server/storage/layout.ts): key `media/<id>/<file>` is the file
 * DATA/media/<id>/<file>. A put writes a temp file under DATA/tmp/ (the same filesystem, emptied
 * at startup) and renames it into place, so a key holds the old bytes or the complete new ones,
 * never part of a file, and a failed put leaves nothing behind.
 */
export function createDiskBlobStore(dataDir: string): BlobStore {
  const tmpDir = join(dataDir, 'tmp');
  const pathOf = (key: string): string => {
    checkBlobKey(key);
    return join(dataDir, ...key.split('/'));
  };
  const tempPath = async (): Promise<string> => {
    await mkdir(tmpDir, { recursive: true });
    return join(tmpDir, `blob-${randomBytes(8).toString('hex')}`);
  };
  const place = async (temp: string, target: string): Promise<void> => {
    try {
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  };
  const info = (key: string, size: number): BlobInfo => ({ key, size, contentType: mimeForName(key) });

  return {
    kind: 'disk',
    location: `disk:${dataDir}`,

    async check() {
      await access(dataDir);
    },

    async putFile(key, path, options: PutFileOptions) {
      const target = pathOf(key);
      const source = await stat(path);
      if (!source.isFile()) throw new Error(`not a file: ${path}`);
      const { size } = source;
      if (options.removeSource) {
        try {
          // The pipeline's files are under DATA/tmp/: a rename, nothing copied.
          await mkdir(dirname(target), { recursive: true });
          await rename(path, target);
          return info(key, size);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        }
      }
      const temp = await tempPath();
      try {
        await copyFile(path, temp);
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
      await place(temp, target);
      if (options.removeSource) await rm(path, { force: true });
      return info(key, size);
    },

    async putStream(key, source: Readable, options: PutStreamOptions) {
      const target = pathOf(key);
      const temp = await tempPath();
      const limit = new ByteLimit(options.maxBytes);
      try {
        await pipeline(
          source,
          limit,
          createWriteStream(temp, { flags: 'wx', highWaterMark: WRITE_BYTES }),
          ...(options.signal ? [{ signal: options.signal }] : []),
        );
      } catch (error) {
        await rm(temp, { force: true });
        throw limit.refused ?? error;
      }
      await place(temp, target);
      return info(key, limit.bytes);
    },

    async move(from, to) {
      const source = pathOf(from);
      const target = pathOf(to);
      const size = await sizeOf(source, from);
      await mkdir(dirname(target), { recursive: true });
      await rename(source, target);
      await removeEmptyParents(dataDir, dirname(source));
      return info(to, size);
    },

    localPath: pathOf,

    async get(key, options: { range?: BlobRange } = {}) {
      const path = pathOf(key);
      const size = await sizeOf(path, key);
      let start = 0;
      let end = size - 1;
      if (options.range) {
        const resolved = resolveRange(options.range, size);
        if (!resolved) throw new BlobRangeError(size);
        ({ start, end } = resolved);
      }
      // An empty file has no byte 0: an empty stream, not createReadStream's {end: -1}.
      const stream =
        size === 0
          ? createReadStream(path, { highWaterMark: READ_BYTES })
          : createReadStream(path, { start, end, highWaterMark: READ_BYTES });
      const read: BlobRead = {
        stream,
        size,
        start,
        end,
        partial: options.range !== undefined,
        contentType: mimeForName(key),
      };
      return read;
    },

    async head(key) {
      const path = pathOf(key);
      try {
        const s = await stat(path);
        return s.isFile() ? info(key, s.size) : null;
      } catch {
        return null;
      }
    },

    async delete(key) {
      const path = pathOf(key);
      await rm(path, { force: true });
      await removeEmptyParents(dataDir, dirname(path));
    },

    async *list(prefix) {
      checkBlobPrefix(prefix);
      const cut = prefix.lastIndexOf('/');
      const roots = cut < 0 ? BLOB_AREAS.filter((a) => a.startsWith(prefix)) : [prefix.slice(0, cut)];
      for (const root of roots) {
        for await (const key of walk(dataDir, root)) {
          if (!key.startsWith(prefix)) continue;
          const s = await stat(join(dataDir, ...key.split('/'))).catch(() => null);
          if (s?.isFile()) yield { key, size: s.size, contentType: null, modifiedMs: s.mtimeMs };
        }
      }
    },
  };
}

/** An item's directory goes with its last file, as it did when retention removed the directory. */
async function removeEmptyParents(dataDir: string, from: string): Promise<void> {
  let dir = from;
  while (dir !== dataDir && !BLOB_AREAS.some((a) => dir === join(dataDir, a))) {
    try {
      await rmdir(dir);
    } catch {
      return;
    }
    dir = dirname(dir);
  }
}

async function sizeOf(path: string, key: string): Promise<number> {
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new BlobNotFoundError(key);
    return s.size;
  } catch (error) {
    if (error instanceof BlobNotFoundError) throw error;
    throw new BlobNotFoundError(key);
  }
}

/** Keys of the files under `dir` (a key prefix of whole segments), depth first. */
async function* walk(dataDir: string, dir: string): AsyncGenerator<string> {
  let entries: Dirent[];
  try {
    entries = await readdir(join(dataDir, ...dir.split('/')), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const key = `${dir}/${entry.name}`;
    if (entry.isDirectory()) yield* walk(dataDir, key);
    else if (entry.isFile()) yield key;
  }
}
