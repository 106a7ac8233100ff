import { createDiskBlobStore } from './disk.ts';
import type { BlobStore } from './types.ts';

export type {
  BlobInfo,
  BlobRange,
  BlobRead,
  BlobStore,
  PresignOptions,
  PutFileOptions,
  PutStreamOptions,
} from './types.ts';
export { BlobKeyError, BlobNotFoundError, BlobRangeError, BlobTooLargeError, resolveRange } from './types.ts';
export { BLOB_AREAS, checkBlobKey, isBlobKey } from './blob-keys.ts';
export { createDiskBlobStore } from './disk.ts';
// The S3 store (./s3.ts) is not re-exported: it loads the AWS SDK (~0.25 s here), which the
// embedded Local engine on disk never needs. openBlobStore imports it only for an s3:// location.

/** Where files live, as `--storage` / CLIPDESK_STORAGE_URL name it (parsed by server/cli/locations.ts). */
export type BlobLocation = { kind: 'file'; dataDir: string } | { kind: 's3'; bucket: string; prefix: string };

/** The store for a location; `close()` releases an S3 client's sockets (nothing on disk). */
export async function openBlobStore(location: BlobLocation): Promise<BlobStore & { close(): void }> {
  if (location.kind === 'file') return { ...createDiskBlobStore(location.dataDir), close: () => undefined };
  const { createS3BlobStore } = await import('./s3.ts');
  return createS3BlobStore({ bucket: location.bucket, prefix: location.prefix });
}
