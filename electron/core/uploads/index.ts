export { createUploader } from './uploader.ts';
export type { UploadPhase, UploadResult, Uploader } from './uploader.ts';
export { createFileDedupStore, createMemoryDedupStore } from './dedup.ts';
