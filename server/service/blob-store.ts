import type { BlobStore } from '../storage/blobs/index.ts';
import { createDiskBlobStore } from '../storage/blobs/index.ts';
import type { StartServiceOptions } from './options.ts';

/** How long the store may take to answer its first check before the start gives up on it. */
const STORE_CHECK_TIMEOUT_MS = 30_000;

/**
 * The store the service keeps its files in (the caller's, else the disk store on the data
 * directory), checked: file redirects need presigned URLs, and the store must answer.
 */
export async function openBlobStore(
  dataDir: string,
  opts: Pick<StartServiceOptions, 'store' | 'fileRedirects'>,
): Promise<BlobStore> {
  const store = opts.store ?? createDiskBlobStore(dataDir);
  if (opts.fileRedirects === true && !store.presignGet)
    throw new Error(`file redirects need a store with presigned URLs (S3); the ${store.kind} store has none`);
  await Promise.race([
    store.check(),
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error('no answer in 30 s')), STORE_CHECK_TIMEOUT_MS).unref(),
    ),
  ]).catch((error: unknown) => {
    throw new Error(
      `the file storage ${store.location} cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  return store;
}
