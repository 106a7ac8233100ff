export { createUploader } from './uploader.ts';
export type {
  UploadOptions,
  UploadPhase,
  UploadProgress,
  UploadResult,
  UploadSource,
  Uploader,
  UploaderOptions,
} from './uploader.ts';
export { createFileDedupStore, createMemoryDedupStore } from './dedup.ts';
export type { UploadDedupStore } from './dedup.ts';
