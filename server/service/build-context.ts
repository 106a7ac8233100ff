import type { Clock } from '../../shared/clock.ts';
import type { ServiceContext } from '../context.ts';
import { ConcurrencyLimiter, databaseSlotStore } from '../limits/concurrency.ts';
import { SLOT_LEASE_MS } from '../limits/leased-rows.ts';
import { RateLimiter, databaseRateStore } from '../limits/rate-limiter.ts';
import { databaseReservations } from '../limits/storage-quota.ts';
import type { Logger } from '../logger.ts';
import { defaultHostLookup } from '../net/host-lookup.ts';
import { runPipeline } from '../pipeline/index.ts';
import { ProviderJobClaims } from '../providers/remote/job-claims.ts';
import { DEFAULT_RUNNER_OPTIONS } from '../providers/remote/runner.ts';
import type { RunnerOptions } from '../providers/remote/runner.ts';
import { WebhookHub } from '../providers/remote/webhooks.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import { guardBlobStore } from '../storage/blobs/guard.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import type { Layout } from '../storage/layout.ts';
import type { UrlSigner } from '../storage/signing.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';
import { checkWebhookTarget } from '../webhooks/target.ts';
import type { ClientWebhooks } from './client-webhooks.ts';
import type { RemoteTimings, StartServiceOptions } from './options.ts';
import type { WiredProviders } from './providers.ts';
import { Generations } from '../generation/generations.ts';
import type { GenerationServices } from '../generation/services.ts';

/** What the context is made of: the parts startService opened and wired before it. */
export interface ContextParts {
  db: SqlDatabase;
  clock: Clock;
  layout: Layout;
  store: BlobStore;
  signer: UrlSigner;
  logger: Logger;
  /** This process among the nodes on one database: its storage reservations. */
  node: string;
  /** Who holds this run's upload claims (server/uploads/claim-node.ts). */
  holder: { node: string; run: string };
  providers: Pick<WiredProviders, 'catalog' | 'providerHealth'>;
  webhooks: Pick<ClientWebhooks, 'dispatcher' | 'policy'>;
  queue: GenerationQueue | undefined;
}

/** The options the context reads. */
export type ContextOptions = Pick<
  StartServiceOptions,
  | 'fileRedirects'
  | 'publicUrl'
  | 'retentionSecondsOverride'
  | 'fileUrlTtlSeconds'
  | 'allowPrivateImageUrls'
  | 'imageUrlLookup'
  | 'remoteTimings'
>;

export interface BuiltContext {
  ctx: ServiceContext;
  /** Aborted when the service closes (ctx.shutdown is its signal). */
  shutdown: AbortController;
  /** The work ctx.track follows, which close waits for. */
  pending: Set<Promise<unknown>>;
  /** Sets what ctx.origin() answers, once the server listens. */
  setOrigin(origin: string): void;
}

/** `--public-url` as an origin: without trailing slashes or /v1. */
export function publicOrigin(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** The runner options among the timings, without keys left undefined (which would override defaults). */
function definedOnly(timings: RemoteTimings): Partial<RunnerOptions> {
  const keys: Array<keyof RunnerOptions> = [
    'pollInitialMs',
    'pollMaxMs',
    'pollFactor',
    'jitter',
    'webhookPollMs',
    'timeoutMs',
    'maxPollErrors',
    'requestTimeoutMs',
  ];
  return Object.fromEntries(keys.flatMap((k) => (timings[k] !== undefined ? [[k, timings[k]]] : [])));
}

/**
 * The ServiceContext every route runs on (server/context.ts), with the service's one Generations
 * object (generation/generations.ts), built here from the services it is lent.
 */
export function buildServiceContext(parts: ContextParts, opts: ContextOptions): BuiltContext {
  const { db, clock, logger, queue } = parts;
  const { catalog, providerHealth } = parts.providers;
  const timings = opts.remoteTimings ?? {};
  const shutdown = new AbortController();
  const pending = new Set<Promise<unknown>>();
  let origin = '';
  const publicUrl = opts.publicUrl !== undefined ? publicOrigin(opts.publicUrl) : undefined;

  const services: GenerationServices = {
    db,
    clock,
    layout: parts.layout,
    blobs: guardBlobStore(parts.store, (m) => logger.warn(m)),
    signer: parts.signer,
    concurrency: new ConcurrencyLimiter(databaseSlotStore(db), (error) =>
      logger.warn(
        `could not release a concurrency slot yet (retrying; it is no longer renewed, so it frees within ${SLOT_LEASE_MS / 1000} s at the latest): ${String(error)}`,
      ),
    ),
    reservations: databaseReservations(db, parts.node),
    catalog,
    runPipeline: (input) => runPipeline(input),
    logger,
    shutdown: shutdown.signal,
    track(work) {
      pending.add(work);
      void work.then(
        () => pending.delete(work),
        () => pending.delete(work),
      );
      return work;
    },
    origin: () => origin,
    retentionOverrideSeconds: opts.retentionSecondsOverride,
    fileUrlTtlSeconds: opts.fileUrlTtlSeconds,
    imageFetch: {
      allowPrivate: opts.allowPrivateImageUrls === true,
      lookup: opts.imageUrlLookup ?? defaultHostLookup,
    },
    providerHealth,
    remote: {
      settings: (id) => catalog.adapterSettings(id),
      options: { ...DEFAULT_RUNNER_OPTIONS, ...definedOnly(timings) },
      stallMs: timings.stallMs ?? 60_000,
      maxRateLimitWaitSeconds: timings.maxRateLimitWaitSeconds ?? 30,
      webhooks: new WebhookHub(),
      ...(publicUrl !== undefined ? { publicUrl } : {}),
      // Several nodes: one of them polls each synchronous generation's provider job.
      ...(db.dialect === 'postgres' ? { jobClaims: new ProviderJobClaims(db, timings.providerJobLeaseMs) } : {}),
    },
    generationFinished: (generation, target) => parts.webhooks.dispatcher.generationFinished(generation, target),
    checkWebhookTarget: (url) => checkWebhookTarget(url, parts.webhooks.policy),
  };
  const ctx: ServiceContext = {
    ...services,
    fileRedirects: opts.fileRedirects === true,
    rate: new RateLimiter(clock, databaseRateStore(db)),
    claimHolder: `${parts.holder.node}.${parts.holder.run}`,
    // How generations run here (in this process, or through the queue of several nodes) is chosen once, now.
    generations: new Generations(services, queue),
  };
  return {
    ctx,
    shutdown,
    pending,
    setOrigin: (next) => {
      origin = next;
    },
  };
}
