import type { Generation, GenerationPlan, GenerationResponse, TierLimits } from '../shared/api/index.ts';
import type { AuthenticatedKey } from './auth/api-keys.ts';
import type { Clock } from '../shared/clock.ts';
import type { Catalog } from './catalog/catalog.ts';
import type { ConcurrencyLimiter } from './limits/concurrency.ts';
import type { RateLimiter } from './limits/rate-limiter.ts';
import type { StorageReservations } from './limits/storage-quota.ts';
import type { PipelineResult } from './pipeline/types.ts';
import type { PipelineInput as FullPipelineInput } from './pipeline/index.ts';
import type { Db } from './storage/db.ts';
import type { Layout } from './storage/layout.ts';
import type { BlobStore } from './storage/blobs/index.ts';
import type { UrlSigner } from './storage/signing.ts';
import type { ImageFetchPolicy } from './net/fetch-image.ts';
import type { Logger } from './logger.ts';
import type { ProviderHealthTracker } from './providers/remote/health.ts';
import type { RemoteRuntime } from './providers/remote/runtime.ts';
import type { GenerationOperation, GenerationRow } from './storage/generations.ts';

/** The pipeline's input as the service drives it (binaries and sizes are the pipeline's defaults). */
export type PipelineInput = Pick<FullPipelineInput, 'kind' | 'master' | 'workDir' | 'signal' | 'probed'>;

/** A synchronous generation request as a runner takes it: the body, its endpoint and its Idempotency-Key. */
export interface SynchronousRequest {
  operation: GenerationOperation;
  endpoint: string;
  raw: unknown;
  key: string | undefined;
}

/**
 * How generations run, chosen once when the service is wired (server/generation/runners.ts;
 * docs/architecture.md, "Runners"): in the process that accepted them (SQLite, one node), or as
 * jobs of the generation queue that any node may run (PostgreSQL). Both give the same answers.
 */
export interface GenerationRunner {
  /** A synchronous request's answer, or its error. */
  synchronous(
    ctx: GenerationRuns,
    auth: AuthenticatedKey,
    request: SynchronousRequest,
    hangUp: AbortSignal,
  ): Promise<{ body: GenerationResponse; replayed: boolean }>;
  /** An asynchronous generation just stored with its plan: started here, or queued for a node. */
  start(ctx: GenerationRuns, auth: AuthenticatedKey, row: GenerationRow, plan: GenerationPlan): Promise<void>;
  /** On start, before the service listens: the generations and provider jobs a previous run left. */
  resumeLeft(ctx: GenerationRuns): Promise<{ generations: number; providerJobs: number }>;
}

/**
 * What a runner reads of the service, whichever way it runs a generation (server/generation/runners.ts):
 * all of it but what only the HTTP side reads (file redirects, rate limits, upload claims, the
 * webhook target check) and the runner itself (docs/architecture.md, "The service's layers").
 */
export type GenerationRuns = Pick<
  ServiceContext,
  | 'db'
  | 'clock'
  | 'layout'
  | 'blobs'
  | 'signer'
  | 'concurrency'
  | 'reservations'
  | 'catalog'
  | 'runPipeline'
  | 'logger'
  | 'shutdown'
  | 'track'
  | 'origin'
  | 'retentionOverrideSeconds'
  | 'fileUrlTtlSeconds'
  | 'imageFetch'
  | 'providerHealth'
  | 'remote'
  | 'generationFinished'
>;

/**
 * A running service as the key of the state kept per service in a WeakMap (runs' cancels, what a
 * synchronous request hands over): its context object, of which nothing is read, so a caller that
 * names only a part of the context reaches the same state (docs/architecture.md, "The service's layers").
 */
export type ServiceKey = object;

/** Everything a request handler needs, wired once by startService. */
export interface ServiceContext {
  db: Db;
  clock: Clock;
  /** Local work directories (renders, temp copies); never where files are kept. */
  layout: Layout;
  /** Where every file the service keeps lives: items' files, thumbnails, transcodes, upload bodies. */
  blobs: BlobStore;
  /** `/v1/files/…` answers 302 to the store's presigned URL instead of streaming (stores that have them). */
  fileRedirects: boolean;
  signer: UrlSigner;
  rate: RateLimiter;
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
  retentionOverrideSeconds?: number;
  /** How long private items' file URLs work; default DEFAULT_FILE_URL_TTL_SECONDS. */
  fileUrlTtlSeconds?: number;
  /** How an `image_url` that is not the service's own may be fetched. */
  imageFetch: ImageFetchPolicy;
  /** Each remote provider's health (GET /providers `status`); routing skips those in cooldown. */
  providerHealth: ProviderHealthTracker;
  /** Keys, timings and webhooks for remote provider jobs. */
  remote: RemoteRuntime;
  /** This process on this node, `<node>.<run>`: who holds its upload claims (server/uploads/claim-node.ts). */
  claimHolder: string;
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
  /** How generations run here: in this process, or through the queue of several nodes (GenerationRunner). */
  runner: GenerationRunner;
}

/** How long a new item of an account with these limits (AuthenticatedKey.limits) is kept. */
export function retentionMs(ctx: Pick<ServiceContext, 'retentionOverrideSeconds'>, limits: TierLimits): number {
  if (ctx.retentionOverrideSeconds !== undefined) return ctx.retentionOverrideSeconds * 1000;
  return limits.retentionDays * 86_400_000;
}
