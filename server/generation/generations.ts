import type { Generation, GenerationResponse } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ConcurrencyLimiter } from '../limits/concurrency.ts';
import type { StorageReservations } from '../limits/storage-quota.ts';
import type { Logger } from '../logger.ts';
import type { ImageFetchPolicy } from '../net/fetch-image.ts';
import type { PipelineResult } from '../pipeline/types.ts';
import type { ProviderHealthTracker } from '../providers/remote/health.ts';
import type { RemoteRuntime } from '../providers/remote/runtime.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import type { Db } from '../storage/db.ts';
import type { GenerationQueue, QueuedGeneration } from '../storage/generation-queue.ts';
import type { GenerationOperation, GenerationRow } from '../storage/generations.ts';
import type { Layout } from '../storage/layout.ts';
import type { UrlSigner } from '../storage/signing.ts';
import { checkWebhookField, startAsyncGeneration } from './async-accept.ts';
import { cancelGeneration } from './async-generation.ts';
import { GenerationEnds } from './generation-ends.ts';
import { IdempotencyKeys } from './idempotency.ts';
import { runQueuedGeneration } from './queued-generation.ts';
import { resumeProviderJobs } from './remote-job.ts';
import { RowWatch } from './row-watch.ts';
import { inProcess, throughQueue } from './runners.ts';
import type { RunStrategy } from './runners.ts';
import type { GenerationScope, GenerationServices, PipelineInput, SynchronousRequest } from './services.ts';
import { SlotHandoff } from './slot-handoff.ts';

/**
 * The generations of one running service (docs/architecture.md, "The Generations object"): built
 * once by the composition root (service/build-context.ts) from the services it lends, it accepts,
 * runs, cancels and resumes them, and owns what the service keeps about them in this process (the
 * runs' cancels, requests in flight by Idempotency-Key, waiters on a generation's end, what a
 * synchronous request hands its run, the rows a queue job watches). How a generation runs is its
 * strategy, chosen here once: in this process (SQLite), or through the queue (PostgreSQL).
 */
export class Generations implements GenerationScope {
  readonly db: Db;
  readonly clock: Clock;
  readonly layout: Layout;
  readonly blobs: BlobStore;
  readonly signer: UrlSigner;
  readonly concurrency: ConcurrencyLimiter;
  readonly reservations: StorageReservations;
  readonly catalog: Catalog;
  readonly runPipeline: (input: PipelineInput) => Promise<PipelineResult>;
  readonly logger: Logger;
  readonly shutdown: AbortSignal;
  readonly track: <T>(work: Promise<T>) => Promise<T>;
  readonly origin: () => string;
  readonly retentionOverrideSeconds: number | undefined;
  readonly fileUrlTtlSeconds: number | undefined;
  readonly imageFetch: ImageFetchPolicy;
  readonly providerHealth: ProviderHealthTracker;
  readonly remote: RemoteRuntime;
  readonly generationFinished: GenerationServices['generationFinished'];
  readonly checkWebhookTarget: (url: string) => Promise<string>;

  readonly cancels = new Map<string, AbortController>();
  readonly keys: IdempotencyKeys;
  readonly ends: GenerationEnds;
  readonly handoff = new SlotHandoff();
  readonly watch: RowWatch;
  private readonly strategy: RunStrategy;

  /** `queue`: the generation queue of several nodes (PostgreSQL); without it, generations run in this process. */
  constructor(services: GenerationServices, queue?: GenerationQueue) {
    this.db = services.db;
    this.clock = services.clock;
    this.layout = services.layout;
    this.blobs = services.blobs;
    this.signer = services.signer;
    this.concurrency = services.concurrency;
    this.reservations = services.reservations;
    this.catalog = services.catalog;
    this.runPipeline = (input) => services.runPipeline(input);
    this.logger = services.logger;
    this.shutdown = services.shutdown;
    this.track = (work) => services.track(work);
    this.origin = () => services.origin();
    this.retentionOverrideSeconds = services.retentionOverrideSeconds;
    this.fileUrlTtlSeconds = services.fileUrlTtlSeconds;
    this.imageFetch = services.imageFetch;
    this.providerHealth = services.providerHealth;
    this.remote = services.remote;
    this.generationFinished = (generation, target) => services.generationFinished(generation, target);
    this.checkWebhookTarget = (url) => services.checkWebhookTarget(url);
    this.keys = new IdempotencyKeys(this.db, this.clock);
    this.ends = new GenerationEnds(this.db);
    this.watch = new RowWatch(this.db, this.shutdown, this.logger, this.cancels);
    this.strategy = queue ? throughQueue(queue) : inProcess;
  }

  /**
   * `Prefer: respond-async`: validates and plans the request now (a bad request is a 400), stores
   * the generation and starts it (here, or queued); with an Idempotency-Key, a repeat gets the
   * generation the first one made (async-accept.ts).
   */
  accept(
    auth: AuthenticatedKey,
    operation: GenerationOperation,
    raw: unknown,
    idempotencyKey: string | undefined,
  ): Promise<{ generation: Generation; replayed: boolean }> {
    return startAsyncGeneration(
      this,
      (key, row, plan) => this.strategy.start(this, key, row, plan),
      auth,
      operation,
      raw,
      idempotencyKey,
    );
  }

  /** A synchronous request: its answer once the generation has ended (in the request, or through the queue). */
  run(
    auth: AuthenticatedKey,
    request: SynchronousRequest,
    hangUp: AbortSignal,
  ): Promise<{ body: GenerationResponse; replayed: boolean }> {
    return this.strategy.synchronous(this, auth, request, hangUp);
  }

  /** Validates a synchronous request's `webhook_url` as an asynchronous one's is (it is never called). */
  checkWebhookField(raw: unknown): Promise<void> {
    return checkWebhookField(this.checkWebhookTarget, raw);
  }

  /** `DELETE /generations/:id`: ends it `canceled` unless final, and stops its run here (async-generation.ts). */
  cancel(row: GenerationRow): Promise<Generation> {
    return cancelGeneration(this, row);
  }

  /** On start, before the service listens: what a previous run left (generations, provider jobs), resumed or queued again. */
  resume(): Promise<{ generations: number; providerJobs: number }> {
    return this.strategy.resumeLeft(this);
  }

  /** PostgreSQL: one job of the generation queue, on this node (queued-generation.ts). */
  runQueued(job: QueuedGeneration): Promise<void> {
    return runQueuedGeneration(this, job);
  }

  /** PostgreSQL, every third of a claim's lease: the synchronous requests' provider jobs nobody holds any more, resumed here. */
  resumeUnclaimedJobs(): Promise<number> {
    return resumeProviderJobs(this, undefined, { queued: true });
  }
}
