export { createDownloadManager } from './manager.ts';
export type {
  DownloadableItem,
  DownloadContext,
  DownloadManager,
  DownloadManagerOptions,
  DownloadProgress,
  DownloadRequest,
  DownloadResult,
} from './types.ts';
export {
  DEFAULT_NAMING_PATTERN,
  FLAT_NAMING_PATTERN,
  extensionFor,
  fileTimestamp,
  renderPattern,
  resolveInside,
  safeSegment,
} from './naming.ts';
export type { NamingFields } from './naming.ts';
