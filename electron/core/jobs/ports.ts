import type {
  GeneratedItem,
  Generation,
  GenerationResponse,
  ImageGenerationRequest,
  MediaItem,
  MediaListQueryInput,
  Usage,
  VideoGenerationRequest,
} from '../../../shared/api/index.ts';
import type { VideoVariationRequest } from '../../../shared/api/index.ts';
import { ServiceError, type ServiceErrorCode } from '../api/errors.ts';
import type { RetryBudget, WaitNotice } from '../api/retry.ts';
import type { RateWindow } from './scheduler.ts';

/**
 * The narrow slices of the app's services the queue uses. The real ones (createApiClient,
 * createUploader, createDownloadManager) satisfy them as they are; unit tests pass fakes.
 */
export interface GenerationCallOptions {
  idempotencyKey: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Asynchronous mode (a 202): the generation id, before any polling. */
  onAccepted?: (generation: Generation) => void;
  /** Asynchronous mode: the step, queue position or progress changed. */
  onUpdate?: (generation: Generation) => void;
  /** The client waits before it tries again (a 429's Retry-After, a backoff): what for and how long. */
  onWait?: (notice: WaitNotice) => void;
  /** The job's retry budget: the client's retry waits draw from it too (core/api/retry.ts). */
  retryBudget?: RetryBudget;
}

export interface GenerationService {
  readonly rateLimit: RateWindow;
  generateVideo(input: VideoGenerationRequest, options: GenerationCallOptions): Promise<GenerationResponse>;
  generateImage(input: ImageGenerationRequest, options: GenerationCallOptions): Promise<GenerationResponse>;
  /** `POST /videos/variations` (services with asynchronous mode, docs/workflows.md); jobs with `variationOf` fail without it. */
  createVariations?(input: VideoVariationRequest, options: GenerationCallOptions): Promise<GenerationResponse>;
  /** Polls a generation to its end (resume after a restart). */
  waitForGeneration?(
    id: string,
    options: Pick<GenerationCallOptions, 'signal' | 'timeoutMs' | 'onUpdate' | 'onWait' | 'retryBudget'>,
  ): Promise<Generation>;
  /** `DELETE /generations/:id`. */
  cancelGeneration?(id: string, options?: { signal?: AbortSignal }): Promise<Generation>;
  listMedia(
    query?: MediaListQueryInput,
    options?: { signal?: AbortSignal },
  ): Promise<{ total: number; medias: MediaItem[] }>;
  getUsage(options?: { signal?: AbortSignal }): Promise<Usage>;
}

/** Progress of one job's transfer, as the uploader and downloader report it. */
export interface UploadProgressReport {
  sent: number;
  total: number;
}
export interface DownloadProgressReport {
  received: number;
  total: number | null;
}

/** What a job's transfer is given beside its progress: its retries wait within the job's budget, and say so. */
export interface TransferRetries {
  retryBudget?: RetryBudget;
  onWait?: (notice: WaitNotice) => void;
}

export interface StartFrameUploader {
  /** `onProgress` is this job's own: the queue passes one per upload. */
  upload(
    source: { path: string },
    options?: { signal?: AbortSignal; onProgress?: (progress: UploadProgressReport) => void } & TransferRetries,
  ): Promise<{ url: string }>;
}

export interface JobDownloader {
  /** `onProgress` is this job's own: the queue passes one per download. */
  download(
    request: {
      item: GeneratedItem;
      signal?: AbortSignal;
      context?: Record<string, unknown>;
      onProgress?: (progress: DownloadProgressReport) => void;
    } & TransferRetries,
  ): Promise<{ path: string; bytes?: number }>;
}

/** What the queue reads of a failure: a ServiceError's fields; anything else counts as a network failure. */
export function errorInfo(error: unknown): { code: ServiceErrorCode; message: string; retryAfter: number | null } {
  if (error instanceof ServiceError) {
    return { code: error.code, message: error.message, retryAfter: error.retryAfter ?? null };
  }
  return { code: 'network_error', message: error instanceof Error ? error.message : String(error), retryAfter: null };
}
