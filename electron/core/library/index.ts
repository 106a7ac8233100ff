export {
  createShotChains,
  readSidecarLineages,
  SidecarLineage,
  sidecarLineage,
  writeSidecarLineage,
} from './chains.ts';
export type { Shot, ShotChains } from './chains.ts';
export { openDatabase, transaction } from './db.ts';
export { retentionDeadline } from './deadline.ts';
export {
  buildLibraryQuery,
  decodeCursor,
  encodeCursor,
  ftsQuery,
  LIBRARY_PAGE_DEFAULT,
  LIBRARY_PAGE_MAX,
} from './query.ts';
export type { LibraryQuery } from './query.ts';
export { createLibraryStore } from './store.ts';
export type { Collection, LibraryItem, LibraryPage, LibraryStore, LibraryStoreOptions, UpsertResult } from './store.ts';
export { createLibrarySync } from './sync.ts';
export type { LibrarySync, LibrarySyncOptions, MediaSource, SyncResult } from './sync.ts';
export { createRetentionGuard } from './retention.ts';
export type {
  RetentionDownloader,
  RetentionEvent,
  RetentionGuard,
  RetentionGuardOptions,
  RetentionPolicy,
  RetentionTickResult,
} from './retention.ts';
export { downloadManagerAsRetentionDownloader } from './adapters.ts';
export { createUrlRefresher, urlsExpiring } from './url-refresh.ts';
export type { UrlRefresher, UrlRefresherOptions } from './url-refresh.ts';
export { collectionIdsOf, countMatching } from './counts.ts';
export { localFile, safeFileName, shotFile } from './files.ts';
export type { ItemFileDeps } from './files.ts';
export { createMediaTasks } from './media-tasks.ts';
export type { MediaTaskRequest, MediaTaskRunOptions, MediaTasks, MediaTaskUpdate } from './media-tasks.ts';
export { EXPORT_EXTENSIONS, exportFileName, exportMedia, itemOutput, lastFrameOutput } from './outputs.ts';
export type { ExportShape } from './outputs.ts';
export { sequenceClips, sequenceEncoding, sequenceFileName, sequenceId, sequenceOutputId } from './sequences.ts';
export type { SequenceClip, SequenceRequest } from './sequences.ts';
export { downloadAgain, downloadAgainError, queueDownloads } from './item-downloads.ts';
export type { DownloadOutcome, ItemDownloadDeps } from './item-downloads.ts';
export { retainItem, setFavourites, shotTrimFor } from './item-actions.ts';
export type { ShotTrimRequest } from './item-actions.ts';
export { listLibrary } from './listing.ts';
export type { LibraryListing } from './listing.ts';
export { createHoverPreviews, HOVER_PROXY } from './previews.ts';
export type { HoverPreviews, HoverPreviewsOptions } from './previews.ts';
