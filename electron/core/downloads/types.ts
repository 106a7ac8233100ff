import type { GeneratedItem, MediaItem } from '../../../shared/api/index.ts';
import type { ApiClient } from '../api/client-types.ts';
import type { RetryBudget, Sleep, WaitNotice } from '../api/retry.ts';

export type DownloadableItem = MediaItem | GeneratedItem;

/** Facts the item itself does not carry but the sidecar records (from the generation response). */
export interface DownloadContext {
  routing?: string;
  price?: number;
  sourceImage?: string;
  [extra: string]: unknown;
}

export interface DownloadProgress {
  id: string;
  path: string;
  received: number;
  total: number | null;
}

export interface DownloadRequest {
  item: DownloadableItem;
  /** Overrides the manager's root for this download. */
  dir?: string;
  /** A MIME type from `item.formats`; default the item's own. */
  format?: string;
  context?: DownloadContext;
  signal?: AbortSignal;
  onProgress?: (progress: DownloadProgress) => void;
  /**
   * Download anew even when the target file exists ("Download again"): the fresh copy replaces it
   * only once complete and verified, so a failed attempt leaves the old copy in place.
   */
  replace?: boolean;
  /** What the retry waits draw from (a job's budget); one per download when not given (core/api/retry.ts). */
  retryBudget?: RetryBudget;
  /** Told before each wait to resume a broken transfer. */
  onWait?: (notice: WaitNotice) => void;
}

export interface DownloadResult {
  id: string;
  path: string;
  sidecarPath: string;
  bytes: number;
  sha256: string;
  /** 'content' = the authenticated endpoint (the service marks the item downloaded). */
  source: 'content' | 'url' | 'existing';
  /** How many times an interrupted transfer was resumed. */
  resumes: number;
}

export interface DownloadManagerOptions {
  api: ApiClient;
  /** Root folder of downloads. */
  dir: string;
  /** Root folder of images, when not `dir` (the OS's pictures folder: core/settings imageDownloadDir). */
  imageDir?: string;
  pattern?: string;
  /** Downloads running at once; the rest wait in order. */
  concurrency?: number;
  /** Attempts per download (the first included) when the connection breaks. */
  maxAttempts?: number;
  /**
   * A connection that sends no byte for this long is dropped and the download resumed from what it
   * kept (docs/workflows.md): a stalled body would otherwise hold its job in "Downloading" forever.
   */
  idleTimeoutMs?: number;
  sleep?: Sleep;
  random?: () => number;
}

export interface DownloadManager {
  download(request: DownloadRequest): Promise<DownloadResult>;
  /** Absolute target path of an item (what `download` would write). */
  pathFor(item: DownloadableItem, options?: { dir?: string; format?: string }): string;
  onProgress(listener: (progress: DownloadProgress) => void): () => void;
  readonly active: number;
  readonly queued: number;
  dispose(): Promise<void>;
}
