import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { MediaKind, Permission, TierName } from '../shared/api/index.ts';
import type { Clock } from '../shared/clock.ts';
import { systemClock } from '../shared/clock.ts';
import { createKey, listKeys, revokeKey, setTier } from './auth/keys.ts';
import type { CreatedKey, KeyInfo } from './auth/keys.ts';
import { Catalog } from './catalog/catalog.ts';
import type { Logger, ServiceContext } from './context.ts';
import { silentLogger } from './context.ts';
import { answerClientError, answerUnmetExpectation } from './http/respond.ts';
import { createRequestHandler } from './http/router.ts';
import { catalogRoutes } from './http/routes/catalog.ts';
import { fileRoutes } from './http/routes/files.ts';
import { generationRoutes } from './http/routes/generations.ts';
import { mediaRoutes } from './http/routes/media.ts';
import { openApiRoutes } from './http/routes/openapi.ts';
import { providerWebhookRoutes } from './http/routes/provider-webhooks.ts';
import { uploadRoutes } from './http/routes/uploads.ts';
import { usageRoutes } from './http/routes/usage.ts';
import { ConcurrencyLimiter } from './limits/concurrency.ts';
import type { LimitOverrides } from './limits/account-limits.ts';
import { setAccountLimits } from './limits/account-limits.ts';
import { RateLimiter, sqliteRateStore } from './limits/rate-limiter.ts';
import { StorageReservations } from './limits/storage-quota.ts';
import { defaultHostLookup } from './media/image-source.ts';
import { isLoopbackHost } from './media/public-address.ts';
import type { HostLookup } from './media/image-source.ts';
import { resumeProviderJobs } from './media/remote-job.ts';
import { runPipeline } from './pipeline/index.ts';
import { createLocalProviders, MODELS } from './providers/index.ts';
import type { LocalProvider, RemoteProvider } from './providers/types.ts';
import type { AdapterSettings, RemoteProviderId } from './providers/remote/contract.ts';
import { ProviderHealthTracker } from './providers/remote/health.ts';
import { DEFAULT_RUNNER_OPTIONS } from './providers/remote/runner.ts';
import type { RunnerOptions } from './providers/remote/runner.ts';
import { WebhookHub } from './providers/remote/webhooks.ts';
import { sweepRetention } from './retention/sweeper.ts';
import { openDatabase, sql } from './storage/db.ts';
import { Layout } from './storage/layout.ts';
import { mediaExists } from './storage/media-repo.ts';
import { loadOrCreateSecret } from './storage/secret.ts';
import { UrlSigner } from './storage/signing.ts';

export type { CreatedKey, KeyInfo } from './auth/keys.ts';
export type { Logger } from './context.ts';
export type { LimitOverrides } from './limits/account-limits.ts';

export interface StartServiceOptions {
  dataDir: string;
  /** Default 127.0.0.1. A non-loopback host needs `allowRemote`. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The origin (optionally with /v1) that URLs in responses start with; default the listening address. */
  publicUrl?: string;
  /** Provider ids or slugs that fail every request (fallback drills). */
  failProviders?: string[];
  clock?: Clock;
  /** Tests: one retention, in seconds, for every tier. */
  retentionSecondsOverride?: number;
  /** How often the retention sweeper runs; 0 turns the timer off (sweepRetention() still works). Default 60 000. */
  sweepIntervalMs?: number;
  allowRemote?: boolean;
  /**
   * Fetch `image_url`s from loopback and private addresses too (`--allow-private-image-urls`).
   * Off by default: the service would otherwise fetch from its own machine and network for anyone
   * with a key. The embedded engine turns it on (its only user is the machine's owner).
   */
  allowPrivateImageUrls?: boolean;
  /** Tests: resolves `image_url` host names instead of DNS. */
  imageUrlLookup?: HostLookup;
  logger?: Logger;
  /** Seconds a private item's signed file URL works (default 24 h); public items' URLs do not expire. */
  fileUrlTtlSeconds?: number;
  /**
   * Remote AI providers beside the local ones (issue 12); one with the id of a provider already
   * registered replaces it. Tests register a purpose-built adapter here; in production the
   * provider key store feeds the configured providers in.
   */
  remoteProviders?: RemoteProvider[];
  /** How each remote provider is reached (its key and base URL); undefined: no key. Never logged or stored. */
  providerSettings?: (id: RemoteProviderId) => AdapterSettings | undefined;
  /** Remote job timings (tests use milliseconds); the defaults suit real providers. */
  remoteTimings?: RemoteTimings;
}

export interface RemoteTimings extends Partial<RunnerOptions> {
  /** An output download that sends nothing this long is resumed or given up. Default 60 000. */
  stallMs?: number;
  /** A 429's Retry-After is waited out once when at most this long, else the next provider. Default 30. */
  maxRateLimitWaitSeconds?: number;
  /** Failures in a row before a provider is skipped for `cooldownMs`. Default 3. */
  failuresBeforeCooldown?: number;
  /** Default 60 000. */
  cooldownMs?: number;
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

/** Instrumentation for tests: the highest number of generations seen running at once. */
export interface ServiceStats {
  maxConcurrent(user: string, kind: MediaKind): number;
  running(user: string, kind: MediaKind): number;
  snapshot(): Array<{ user: string; kind: MediaKind; max: number }>;
}

export interface RunningService {
  /** `http://HOST:PORT/v1` */
  url: string;
  host: string;
  port: number;
  close(): Promise<void>;
  createKey(o: { user: string; tier?: TierName; name?: string; permissions?: Permission[] }): Promise<CreatedKey>;
  revokeKey(id: string): Promise<boolean>;
  listKeys(user: string): Promise<KeyInfo[]>;
  setTier(user: string, tier: TierName): Promise<void>;
  /** `users set-limits`: merges per-account limits; false when there is no such user. */
  setLimits(user: string, limits: LimitOverrides): Promise<boolean>;
  /** Runs retention now; resolves with the number of items deleted. */
  sweepRetention(): Promise<number>;
  stats: ServiceStats;
}

export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && opts.allowRemote !== true) {
    throw new Error(`refusing to listen on non-loopback host ${host} without allowRemote (--allow-remote)`);
  }
  const dataDir = resolve(opts.dataDir);
  await mkdir(dataDir, { recursive: true });
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const layout = new Layout(dataDir);
  await layout.prepare();
  const db = openDatabase(dataDir);
  const signer = new UrlSigner(await loadOrCreateSecret(dataDir));
  await layout.removeOrphans((id) => mediaExists(db, id));

  const failing = new Set((opts.failProviders ?? []).map((s) => s.trim().toLowerCase()));
  const local = createLocalProviders({ failProviders: [...failing] });
  const remote = opts.remoteProviders ?? [];
  // The catalog's types still say local; routing and the catalog only read ids, slugs and offers.
  const providers = [
    ...local.filter((p) => !remote.some((r) => r.id === p.id)),
    ...remote,
  ] as unknown as LocalProvider[];
  const failingIds = new Set(providers.filter((p) => failing.has(p.id) || failing.has(p.slug)).map((p) => p.id));
  const shutdown = new AbortController();
  const pending = new Set<Promise<unknown>>();
  let origin = '';
  const timings = opts.remoteTimings ?? {};
  const publicOrigin = opts.publicUrl?.replace(/\/+$/, '').replace(/\/v1$/, '');

  const ctx: ServiceContext = {
    db,
    clock,
    layout,
    signer,
    rate: new RateLimiter(clock, sqliteRateStore(db)),
    concurrency: new ConcurrencyLimiter(),
    reservations: new StorageReservations(),
    catalog: new Catalog(MODELS, providers, failingIds),
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
    keyRequests: new Map(),
    imageFetch: {
      allowPrivate: opts.allowPrivateImageUrls === true,
      lookup: opts.imageUrlLookup ?? defaultHostLookup,
    },
    providerHealth: new ProviderHealthTracker({
      failuresBeforeCooldown: timings.failuresBeforeCooldown,
      cooldownMs: timings.cooldownMs,
    }),
    remote: {
      settings: opts.providerSettings ?? (() => undefined),
      options: { ...DEFAULT_RUNNER_OPTIONS, ...definedOnly(timings) },
      stallMs: timings.stallMs ?? 60_000,
      maxRateLimitWaitSeconds: timings.maxRateLimitWaitSeconds ?? 30,
      webhooks: new WebhookHub(),
      ...(publicOrigin !== undefined ? { publicUrl: publicOrigin } : {}),
    },
  };
  // Remote jobs a previous run left in flight: finished now, before any request can repeat them.
  const resumed = resumeProviderJobs(ctx);
  if (resumed > 0) logger.info(`resuming ${resumed} provider job${resumed === 1 ? '' : 's'} left by the last run`);

  const routes = [
    ...uploadRoutes,
    ...catalogRoutes,
    ...generationRoutes,
    ...mediaRoutes,
    ...usageRoutes,
    ...fileRoutes,
    ...openApiRoutes,
    ...providerWebhookRoutes,
  ];
  const server = createServer({ keepAliveTimeout: 5_000 }, createRequestHandler(ctx, routes));
  // Malformed HTTP and unmet `Expect`s get the error envelope rather than Node's bare status line.
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const shownHost = urlHost === '0.0.0.0' || urlHost === '[::]' ? '127.0.0.1' : urlHost;
  origin = opts.publicUrl
    ? opts.publicUrl.replace(/\/+$/, '').replace(/\/v1$/, '')
    : `http://${shownHost}:${address.port}`;

  /** Per-key request counts are kept in memory on the hot path and written out now and then. */
  const flushKeyRequests = () => {
    for (const [id, n] of ctx.keyRequests)
      sql(db, 'UPDATE api_keys SET requests = requests + ? WHERE id = ?').run(n, id);
    ctx.keyRequests.clear();
  };
  const sweepEvery = opts.sweepIntervalMs ?? 60_000;
  let sweeping: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    sweeping ??= sweepRetention(ctx).finally(() => {
      sweeping = null;
    });
    return sweeping;
  };
  const timer =
    sweepEvery > 0
      ? setInterval(() => {
          flushKeyRequests();
          sweep().catch((error: unknown) => logger.error(`retention sweep failed: ${String(error)}`));
        }, sweepEvery)
      : null;
  timer?.unref();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (timer) clearInterval(timer);
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      shutdown.abort();
      await Promise.allSettled([...pending]);
      server.closeAllConnections();
      await stopped;
      await sweeping?.catch(() => undefined);
      flushKeyRequests();
      db.close();
    })();
    return closing;
  };

  return {
    url: `http://${shownHost}:${address.port}/v1`,
    host: shownHost,
    port: address.port,
    close,
    createKey: (o) => Promise.resolve(createKey(db, clock.now(), o)),
    revokeKey: (id) => Promise.resolve(revokeKey(db, clock.now(), id)),
    listKeys: (user) => Promise.resolve(listKeys(db, user)),
    setTier: (user, tier) => Promise.resolve(setTier(db, clock.now(), user, tier)),
    setLimits: (user, limits) => Promise.resolve(setAccountLimits(db, user, limits)),
    sweepRetention: sweep,
    stats: {
      maxConcurrent: (user, kind) => ctx.concurrency.maxObserved(user, kind),
      running: (user, kind) => ctx.concurrency.count(user, kind),
      snapshot: () => ctx.concurrency.snapshot(),
    },
  };
}
