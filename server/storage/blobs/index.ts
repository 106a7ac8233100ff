import { createDiskBlobStore } from './disk.ts';
import { createS3BlobStore } from './s3.ts';
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
export { BLOB_AREAS, checkBlobKey, isBlobKey } from './keys.ts';
export { createDiskBlobStore } from './disk.ts';
export { createS3BlobStore, s3ClientConfig, S3_ENDPOINT_ENV } from './s3.ts';

/** Where files live, as `--storage` / CLIPDESK_STORAGE_URL name it (parsed by server/cli/locations.ts). */
export type BlobLocation = { kind: 'file'; dataDir: string } | { kind: 's3'; bucket: string; prefix: string };

/** The store for a location; `close()` releases an S3 client's sockets (nothing on disk). */
export function openBlobStore(location: BlobLocation): BlobStore & { close(): void } {
  if (location.kind === 'file') return { ...createDiskBlobStore(location.dataDir), close: () => undefined };
  return createS3BlobStore({ bucket: location.bucket, prefix: location.prefix });
}
