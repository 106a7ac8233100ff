export { createDownloadManager } from './manager.ts';
export type { DownloadManager, DownloadProgress, DownloadResult } from './types.ts';
export {
  DEFAULT_NAMING_PATTERN,
  FLAT_NAMING_PATTERN,
  extensionFor,
  renderPattern,
  resolveInside,
  safeSegment,
} from './naming.ts';
