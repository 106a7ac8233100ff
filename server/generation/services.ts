import type { Generation, TierLimits } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ConcurrencyLimiter } from '../limits/concurrency.ts';
import type { StorageReservations } from '../limits/storage-quota.ts';
import type { Logger } from '../logger.ts';
import type { ImageFetchPolicy } from '../net/fetch-image.ts';
import type { PipelineInput as FullPipelineInput } from '../pipeline/index.ts';
import type { PipelineResult } from '../pipeline/types.ts';
import type { ProviderHealthTracker } from '../providers/remote/health.ts';
import type { RemoteRuntime } from '../providers/remote/runtime.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import type { Db } from '../storage/db.ts';
import type { GenerationOperation } from '../storage/generations.ts';
import type { Layout } from '../storage/layout.ts';
import type { UrlSigner } from '../storage/signing.ts';
import type { GenerationEnds } from './generation-ends.ts';
import type { IdempotencyKeys } from './idempotency.ts';
import type { RowWatch } from './row-watch.ts';
import type { SlotHandoff } from './slot-handoff.ts';

/** The pipeline's input as the service drives it (binaries and sizes are the pipeline's defaults). */
export type PipelineInput = Pick<FullPipelineInput, 'kind' | 'master' | 'workDir' | 'signal' | 'probed'>;

/**
 * What the composition root lends the generation layer (service/build-context.ts): the database,
 * the stores, the limits, the catalog, the providers' runtime and the service's lifetime. The
 * Generations object (generations.ts) holds them; ServiceContext (context.ts) is these and what only
 * the HTTP side reads (docs/architecture.md, "The Generations object").
 */
export interface GenerationServices {
  db: Db;
  clock: Clock;
  /** Local work directories (renders, temp copies); never where files are kept. */
  layout: Layout;
  /** Where every file the service keeps lives: items' files, thumbnails, transcodes, upload bodies. */
  blobs: BlobStore;
  signer: UrlSigner;
  concurrency: ConcurrencyLimiter;
  /** Bytes reserved by running generations (the storage quota counts them). */
  reservations: StorageReservations;
  catalog: Catalog;
  runPipeline(input: PipelineInput): Promise<PipelineResult>;
  logger: Logger;
  /** Aborted when the service closes: generations are tied to this, not to their request. */
  shutdown: AbortSignal;
  /** Work that must finish (or abort) before close resolves. */
  track<T>(work: Promise<T>): Promise<T>;
  /** `http://host:port` (no /v1) that URLs in responses start with. */
  origin(): string;
  retentionOverrideSeconds?: number | undefined;
  /** How long private items' file URLs work; default DEFAULT_FILE_URL_TTL_SECONDS. */
  fileUrlTtlSeconds?: number | undefined;
  /** How an `image_url` that is not the service's own may be fetched. */
  imageFetch: ImageFetchPolicy;
  /** Each remote provider's health (GET /providers `status`); routing skips those in cooldown. */
  providerHealth: ProviderHealthTracker;
  /** Keys, timings and webhooks for remote provider jobs. */
  remote: RemoteRuntime;
  /**
   * Called once when a generation reaches succeeded, failed or canceled: records a webhook delivery
   * to `target` (the request's `webhook_url` and the key that made it) and sends it, retrying for
   * up to 24 h (server/webhooks/dispatcher.ts). Resolves once the delivery is recorded. Without a
   * target it does nothing. Never rejects.
   */
  generationFinished(generation: Generation, target: { url: string; keyId: string } | undefined): Promise<void>;
  /**
   * Checks a request's `webhook_url`: http(s), at most 2,048 characters, and (unless
   * `--allow-private-webhooks`) resolving only to public addresses. Throws
   * ApiError('invalid_request_error') (400).
   */
  checkWebhookTarget(url: string): Promise<string>;
}

/**
 * What the generation modules run on: the services, and the state this running service keeps
 * about its generations. The Generations object (generations.ts) is its one implementation, so
 * each running service has its own state, and nothing is kept in a module.
 */
export interface GenerationScope extends GenerationServices {
  /** The cancel of each generation running in this process (its abort reason: Canceled or LeaseLost). */
  readonly cancels: Map<string, AbortController>;
  /** Requests running now by Idempotency-Key, and each key's turn (idempotency.ts). */
  readonly keys: IdempotencyKeys;
  /** Synchronous requests waiting for a generation's end (generation-ends.ts). */
  readonly ends: GenerationEnds;
  /** What a synchronous request holds for its queued generation (slot-handoff.ts). */
  readonly handoff: SlotHandoff;
  /** The rows of the queued generations this node runs, looked at each second (row-watch.ts). */
  readonly watch: RowWatch;
}

/** A synchronous generation request as a runner takes it: the body, its endpoint and its Idempotency-Key. */
export interface SynchronousRequest {
  operation: GenerationOperation;
  endpoint: string;
  raw: unknown;
  key: string | undefined;
}

/** How long a new item of an account with these limits (AuthenticatedKey.limits) is kept; `overrideSeconds`: `--retention`. */
export function retentionMs(overrideSeconds: number | undefined, limits: TierLimits): number {
  if (overrideSeconds !== undefined) return overrideSeconds * 1000;
  return limits.retentionDays * 86_400_000;
}
