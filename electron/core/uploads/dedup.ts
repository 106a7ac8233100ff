import { readFile } from 'node:fs/promises';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import type { MediaItem } from '../../../shared/api/index.ts';

/**
 * Earlier uploads by content hash, per service: the same bytes sent to the same service again
 * reuse the media item instead of uploading twice. Kept in a small JSON file (no secrets in it).
 */
export interface UploadDedupStore {
  get(service: string, sha256: string): Promise<MediaItem | null>;
  put(service: string, sha256: string, item: MediaItem): Promise<void>;
}

type Table = Record<string, Record<string, MediaItem>>;

export function createFileDedupStore(file: string): UploadDedupStore {
  let cache: Table | null = null;
  let writing: Promise<void> = Promise.resolve();
  async function load(): Promise<Table> {
    if (cache) return cache;
    try {
      cache = JSON.parse(await readFile(file, 'utf8')) as Table;
    } catch {
      cache = {};
    }
    return cache;
  }
  return {
    async get(service, sha256) {
      const item = (await load())[service]?.[sha256] ?? null;
      if (item?.expiresAt && Date.parse(item.expiresAt) <= Date.now()) return null;
      return item;
    },
    async put(service, sha256, item) {
      const table = await load();
      (table[service] ??= {})[sha256] = item;
      writing = writing.then(() => atomicWriteFile(file, JSON.stringify(table)));
      await writing;
    },
  };
}

export function createMemoryDedupStore(): UploadDedupStore {
  const table = new Map<string, MediaItem>();
  return {
    get: (service, sha256) => Promise.resolve(table.get(`${service} ${sha256}`) ?? null),
    put: (service, sha256, item) => {
      table.set(`${service} ${sha256}`, item);
      return Promise.resolve();
    },
  };
}
