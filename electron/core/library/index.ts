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
