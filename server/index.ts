import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CatalogSyncReport, MediaKind, Permission, SyncedProvider, TierName } from '../shared/api/index.ts';
import type { Clock } from '../shared/clock.ts';
import { systemClock } from '../shared/clock.ts';
import { listKeys, revokeKey, setTier } from './auth/keys.ts';
import type { CreatedKey, KeyInfo } from './auth/keys.ts';
import { Catalog } from './catalog/catalog.ts';
import type { ServiceContext } from './context.ts';
import type { Logger } from './logger.ts';
import { silentLogger } from './logger.ts';
import { answerClientError, answerUnmetExpectation } from './http/respond.ts';
import { healthProbes } from './http/health.ts';
import { createRequestHandler } from './http/router.ts';
import { catalogRoutes } from './http/routes/catalog.ts';
import { fileRoutes } from './http/routes/files.ts';
import { generationRoutes } from './http/routes/generations.ts';
import { routingPreviewRoutes } from './http/routes/routing-preview.ts';
import { asyncGenerationRoutes } from './http/routes/async-generations.ts';
import { mediaRoutes } from './http/routes/media.ts';
import { openApiRoutes } from './http/routes/openapi.ts';
import { providerWebhookRoutes } from './http/routes/provider-webhooks.ts';
import { uploadRoutes } from './http/routes/uploads.ts';
import { usageRoutes } from './http/routes/usage.ts';
import { ConcurrencyLimiter, databaseSlotStore } from './limits/concurrency.ts';
import { SLOT_LEASE_MS } from './limits/leased-rows.ts';
import type { LimitOverrides } from './limits/account-limits.ts';
import { setAccountLimits } from './limits/account-limits.ts';
import { RateLimiter, databaseRateStore } from './limits/rate-limiter.ts';
import { databaseReservations } from './limits/storage-quota.ts';
import { defaultHostLookup } from './net/host-lookup.ts';
import type { HostLookup } from './net/host-lookup.ts';
import { isLoopbackHost } from './net/public-address.ts';
import { resumeGenerations } from './generation/async-generation.ts';
import { resumeProviderJobs } from './generation/remote-job.ts';
import type { GenerationQueue } from './storage/generation-queue.ts';
import { runQueuedGeneration } from './generation/queued-generation.ts';
import { runPipeline } from './pipeline/index.ts';
import { createLocalProviders, MODELS } from './providers/index.ts';
import { loadCatalog } from './providers/catalog/load.ts';
import {
  DEFAULT_CATALOG_CHECK_MS,
  DEFAULT_CATALOG_SYNC_HOURS,
  startServiceCatalogSync,
} from './catalog/sync/service-sync.ts';
import { ProviderSettings } from './providers/keys.ts';
import { watchKeyFile } from './providers/key-file-watch.ts';
import { claimHolder } from './uploads/claim-node.ts';
import { clearDeadClaims } from './uploads/receive-claim.ts';
import { ADAPTERS } from './providers/remote/adapters.ts';
import type { ProviderAdapter, RemoteProviderId } from './providers/remote/contract.ts';
import { isProviderError } from './providers/remote/contract.ts';
import { createRemoteProviders } from './providers/remote/providers.ts';
import type { ProviderStatus } from './catalog/catalog.ts';
import type { RemoteProvider } from './providers/types.ts';
import { ProviderHealthTracker } from './providers/remote/health.ts';
import { DEFAULT_RUNNER_OPTIONS } from './providers/remote/runner.ts';
import type { RunnerOptions } from './providers/remote/runner.ts';
import { WebhookHub } from './providers/remote/webhooks.ts';
import { ProviderJobClaims } from './providers/remote/job-claims.ts';
import type { WebhookRelay } from './providers/remote/webhook-relay.ts';
import { createRetentionSweeper } from './retention/sweeper.ts';
import { openServiceDatabase } from './storage/db.ts';
import type { SqlDatabase } from './storage/sql/types.ts';
import { Layout } from './storage/layout.ts';
import type { BlobStore } from './storage/blobs/index.ts';
import { createDiskBlobStore } from './storage/blobs/index.ts';
import { guardBlobStore } from './storage/blobs/guard.ts';
import { mediaExists } from './storage/media-repo.ts';
import { loadSigningSecret } from './storage/secret.ts';
import { UrlSigner } from './storage/signing.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';
import type { WebhookTimings } from './webhooks/dispatcher.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';
import { WebhookSecrets, createKeyWithWebhookSecret } from './webhooks/secrets.ts';
import { checkWebhookTarget } from './webhooks/target.ts';

export type { CreatedKey, KeyInfo } from './auth/keys.ts';
export type { Logger } from './logger.ts';
export type { ProviderStatus } from './catalog/catalog.ts';
export { CatalogFileError } from './providers/catalog/load.ts';
export { ProviderSettingsError } from './providers/keys.ts';
export type { LimitOverrides } from './limits/account-limits.ts';
export type { WebhookTimings } from './webhooks/dispatcher.ts';

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
   * Provider keys from the embedding app (its keychain), by provider id. They win over the key file
   * (`providers set-key`) and the environment, and are kept in memory only.
   */
  providerKeys?: Partial<Record<string, string>>;
  /** API base URLs by provider id (the app's advanced setting); they win over `CLIPDESK_<ID>_BASE_URL`. */
  providerBaseUrls?: Partial<Record<string, string>>;
  /** Provider ids switched off. */
  disabledProviders?: string[];
  /**
   * Where provider keys (`FAL_KEY`, …) and `CLIPDESK_<ID>_BASE_URL` are read from; default
   * process.env. The embedded engine may pass `{}` so that a shell's variables do not leak in.
   */
  providerEnv?: NodeJS.ProcessEnv;
  /** Adapters by provider id over the built-in ones (tests; a provider absent from both is not offered). */
  providerAdapters?: Partial<Record<RemoteProviderId, ProviderAdapter>>;
  /**
   * Tests: remote providers with offers of their own, beside the catalog's; one with the id of a
   * catalog provider replaces it. Their keys and base URLs come from the same settings as any.
   */
  remoteProviders?: RemoteProvider[];
  /** Remote job timings (tests use milliseconds); the defaults suit real providers. */
  remoteTimings?: RemoteTimings;
  /** How often the key file is looked at for `providers set-key` changes (default 1 s; key-file-watch.ts). */
  keyFileCheckMs?: number;
  /**
   * Send webhooks to loopback and private addresses too (`--allow-private-webhooks`). Off by
   * default: a key holder could otherwise make the service POST into its own machine and network.
   * The embedded engine turns it on (its only user is the machine's owner).
   */
  allowPrivateWebhooks?: boolean;
  /** Tests: resolves webhook host names instead of DNS. */
  webhookLookup?: HostLookup;
  /** Webhook delivery timings (tests use milliseconds); the defaults: 10 s per attempt, retries for 24 h. */
  webhookTimings?: WebhookTimings;
  /**
   * `postgres://…`: the service's rows live in that PostgreSQL database (several nodes may share
   * it). Absent: the SQLite database in `dataDir` (the embedded default).
   */
  database?: string;
  /**
   * PostgreSQL only (`serve --listen-database`): the same database through an address that keeps a
   * session (PostgreSQL itself, or a pooler in session mode), for the LISTEN connections (provider
   * webhooks' relay, the generation queue's wake-ups), one of which carries the node's id for the
   * other nodes' liveness check (job-claims.ts). Default: `database`, which may then go through a
   * pooler in transaction mode.
   */
  listenDatabase?: string;
  /**
   * PostgreSQL only: the generation queue's lease (seconds without a heartbeat before another node
   * takes a generation over; default 30, at least 10) and how many generations this node runs at
   * once (default 16).
   */
  generationQueue?: { leaseSeconds?: number; workers?: number };
  /**
   * Migrate the database to this build's schema at start (default). False (`serve --no-migrate`,
   * where an operator runs `migrate` as a deployment step): a database at another version is
   * refused with SchemaOutOfDateError or SchemaTooNewError, and nothing is changed.
   */
  migrate?: boolean;
  /**
   * Where the service keeps its files (server/storage/blobs/): items, thumbnails, transcodes and
   * upload bodies. Default: the disk store on the data directory (its layout as before). The
   * caller keeps ownership (an S3 store's client is not closed by close()).
   */
  store?: BlobStore;
  /**
   * `/v1/files/…` answers 302 to the store's presigned URL rather than streaming the file through
   * the service (`--file-redirects`); only for stores that have presigned URLs (S3).
   */
  fileRedirects?: boolean;
  /**
   * Hours between scheduled catalog syncs (`serve --catalog-sync-interval`; default 24, 0 = off):
   * on one node at a time, the first one an interval after start (docs/providers.md, "Syncing the catalog").
   */
  catalogSyncIntervalHours?: number;
  /** How often the operator catalog is looked at for a change made elsewhere (default 5 000 ms). */
  catalogCheckMs?: number;
  /**
   * Tests only: receives this node's context once it is wired, so that a test can drive a module
   * on a real node in an order no request can force (an older queue attempt's commit after another
   * attempt took the row: test/integration/server/queue-commit.test.ts).
   */
  onContext?: (ctx: ServiceContext) => void;
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
  /**
   * PostgreSQL: how long a node's claim on a synchronous generation's provider job outlives the
   * node (job-claims.ts); renewed, and checked for lapsed ones, every third of it. Default 60 000.
   */
  providerJobLeaseMs?: number;
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

export type ProviderKeyTest = { ok: true } | { ok: false; message: string };

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
  /**
   * Stops the service. It stops accepting connections and /readyz answers 503 at once; requests
   * in flight may then finish for up to `graceMs` (default 0: the embedded engine quits at once).
   * After that, whatever still runs is aborted: a synchronous request is answered 503 and charged
   * nothing, an asynchronous generation stays queued for the next start to resume, and a remote
   * provider job stays recorded, to be polled, never submitted again. Then the database closes.
   */
  close(options?: { graceMs?: number }): Promise<void>;
  /** The new key, and its webhook signing secret (`webhookSecret`): both shown this once. */
  createKey(o: {
    user: string;
    tier?: TierName;
    name?: string;
    permissions?: Permission[];
  }): Promise<CreatedKey & { webhookSecret: string }>;
  /** A new webhook signing secret for the key (the old one stops working); rejects for an unknown key. */
  rotateWebhookSecret(keyId: string): Promise<string>;
  revokeKey(id: string): Promise<boolean>;
  listKeys(user: string): Promise<KeyInfo[]>;
  setTier(user: string, tier: TierName): Promise<void>;
  /** `users set-limits`: merges per-account limits; false when there is no such user. */
  setLimits(user: string, limits: LimitOverrides): Promise<boolean>;
  /** Runs retention now; resolves with the number of items deleted. */
  sweepRetention(): Promise<number>;
  stats: ServiceStats;
  /**
   * The app's key for a provider (null removes it). Takes effect at once: a removed key stops
   * routing to the provider (unless the key file or the environment has one). Kept in memory only.
   */
  setProviderKey(id: string, key: string | null): Promise<void>;
  setProviderEnabled(id: string, enabled: boolean): Promise<void>;
  /** null: back to `CLIPDESK_<ID>_BASE_URL` or the SDK's default. Refuses a URL that is not http(s). */
  setProviderBaseUrl(id: string, url: string | null): Promise<void>;
  /**
   * One cheap authenticated call that makes nothing (adapter.testKey) with the provider's key in
   * use, or with `key` to try one before storing it.
   */
  testProviderKey(id: string, key?: string): Promise<ProviderKeyTest>;
  /** Every remote provider of this build, configured or not, for Settings → Providers (never a key). */
  providerStatus(): Promise<ProviderStatus[]>;
  /**
   * Syncs the catalog from the providers' listings now (Settings → Providers → "Refresh models"),
   * the providers with a configured key unless named, and reloads it (docs/providers.md, "Syncing the catalog").
   */
  syncCatalog(options?: { providers?: SyncedProvider[] }): Promise<CatalogSyncReport>;
}

export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && opts.allowRemote !== true) {
    throw new Error(`refusing to listen on non-loopback host ${host} without allowRemote (--allow-remote)`);
  }
  const dataDir = resolve(opts.dataDir);
  await mkdir(dataDir, { recursive: true });
  // The schema first: a database this build cannot use stops the start before anything is written.
  const db = await openServiceDatabase(
    opts.database === undefined ? { kind: 'sqlite', dataDir } : { kind: 'postgres', url: opts.database },
    { migrate: opts.migrate !== false },
  );
  if ((db as { namesStatements?: boolean }).namesStatements === false)
    logger(opts).info(
      'the database is reached through a pooler in transaction mode that does not keep prepared statements: statements run unnamed (PgBouncer 1.21+ with max_prepared_statements keeps them)',
    );
  let queue: GenerationQueue | undefined;
  const undo: Array<() => Promise<void> | undefined> = [];
  try {
    if (opts.database !== undefined) queue = await openQueue(opts, opts.database, logger(opts));
    return await startOn(opts, host, dataDir, db, queue, undo);
  } catch (error) {
    for (const step of undo) await step()?.catch(() => undefined);
    await queue?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

function logger(opts: StartServiceOptions): Logger {
  return opts.logger ?? silentLogger;
}

/**
 * PostgreSQL: the generation queue (pg-boss, loaded only here). Migrated with the database unless
 * `--no-migrate`, which refuses a database without it; unreachable stops the start, named.
 */
async function openQueue(opts: StartServiceOptions, url: string, log: Logger): Promise<GenerationQueue> {
  const { openGenerationQueue } = await import('./storage/generation-queue.ts');
  return await openGenerationQueue({
    url,
    ...(opts.listenDatabase !== undefined ? { listenUrl: opts.listenDatabase } : {}),
    migrate: opts.migrate !== false,
    logger: log,
    ...(opts.generationQueue?.leaseSeconds !== undefined ? { leaseSeconds: opts.generationQueue.leaseSeconds } : {}),
    ...(opts.generationQueue?.workers !== undefined ? { workers: opts.generationQueue.workers } : {}),
  });
}

/** The rest of startService, on the database it opened (which it closes should this fail). */
async function startOn(
  opts: StartServiceOptions,
  host: string,
  dataDir: string,
  db: SqlDatabase,
  queue: GenerationQueue | undefined,
  /** What startService undoes should the start fail after it (before the database closes). */
  undo: Array<() => Promise<void> | undefined>,
): Promise<RunningService> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const layout = new Layout(dataDir);
  await layout.prepare();
  const store = opts.store ?? createDiskBlobStore(dataDir);
  if (opts.fileRedirects === true && !store.presignGet)
    throw new Error(`file redirects need a store with presigned URLs (S3); the ${store.kind} store has none`);
  // A store that cannot be reached stops the start, named, before anything is served (startService
  // closes the database).
  await Promise.race([
    store.check(),
    new Promise((_, reject) => setTimeout(() => reject(new Error('no answer in 30 s')), 30_000).unref()),
  ]).catch((error: unknown) => {
    throw new Error(
      `the file storage ${store.location} cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const dataSecret = await loadSigningSecret(db, dataDir, db.description);
  const signer = new UrlSigner(dataSecret);
  const webhookSecrets = new WebhookSecrets(db, dataSecret);
  const webhookPolicy = {
    allowPrivate: opts.allowPrivateWebhooks === true,
    lookup: opts.webhookLookup ?? defaultHostLookup,
  };
  const webhooks = new WebhookDispatcher({
    db,
    secrets: webhookSecrets,
    policy: webhookPolicy,
    logger,
    timings: opts.webhookTimings,
  });
  // Files a kill left without a row. Only where this process is the one service on its files (disk
  // and SQLite): in a bucket, or on a disk nodes on one PostgreSQL database share, another node's
  // item may be between its files and its row (`fsck` has a minimum age).
  if (opts.store === undefined && db.dialect === 'sqlite') await layout.removeOrphans((id) => mediaExists(db, id));

  // Bad keys, base URLs and catalog files stop the service here, with the file and line or the
  // setting's name (never the key itself).
  // The key file is followed while serving: `providers set-key` and `remove-key` apply without a
  // restart (a new key starts its provider's health afresh, as the app's setProviderKey does).
  const keyFile = await watchKeyFile({
    dataDir,
    apply: async (keys, changed) => {
      settings.setFileKeys(keys);
      for (const id of changed) await providerHealth.reset(id);
      logger.info(`provider keys changed in the key file: ${changed.join(', ')}`);
    },
    log: (m) => logger.warn(m),
    ...(opts.keyFileCheckMs !== undefined ? { intervalMs: opts.keyFileCheckMs } : {}),
  });
  const settings = new ProviderSettings({
    env: opts.providerEnv,
    fileKeys: keyFile.keys,
    appKeys: opts.providerKeys,
    appBaseUrls: opts.providerBaseUrls,
    disabled: opts.disabledProviders,
  });
  // The operator catalog: DATA/catalog.json, or on PostgreSQL the database every node reads.
  const operatorDb = db.dialect === 'postgres' ? db : undefined;
  const loaded = await loadCatalog(dataDir, operatorDb);
  const timings = opts.remoteTimings ?? {};
  // Shared through the database by the nodes on PostgreSQL (health.ts); the catalog redacts keys
  // from a failure's message before it is kept (the catalog is made below, and only then called).
  const providerHealth: ProviderHealthTracker = new ProviderHealthTracker({
    failuresBeforeCooldown: timings.failuresBeforeCooldown,
    cooldownMs: timings.cooldownMs,
    ...(db.dialect === 'postgres' ? { db } : {}),
    log: (m) => logger.warn(m),
    redact: (m): string => catalog.redact(m),
  });
  const adapters = { ...ADAPTERS, ...opts.providerAdapters };

  const failing = new Set((opts.failProviders ?? []).map((s) => s.trim().toLowerCase()));
  const providers = createLocalProviders({ failProviders: [...failing] });
  const extra = opts.remoteProviders ?? [];
  const failingIds = new Set(providers.filter((p) => failing.has(p.id) || failing.has(p.slug)).map((p) => p.id));
  const remoteOf = (offers: typeof loaded.offers) => [
    ...createRemoteProviders(offers, adapters).filter((p) => !extra.some((e) => e.id === p.id)),
    ...extra,
  ];
  const catalog = new Catalog({
    models: [...MODELS, ...loaded.models],
    local: providers,
    remote: remoteOf(loaded.offers),
    failing: failingIds,
    settings,
    health: (id) => providerHealth.health(id),
  });
  // This process among the nodes on one database: its storage reservations and the sweep's lease.
  const node = randomUUID();
  // Upload claims its earlier runs left (a PUT cut by kill -9) go now: a resend is received at once.
  const holder = await claimHolder(dataDir);
  const deadClaims = await clearDeadClaims(db, holder);
  if (deadClaims > 0) logger.info(`released ${deadClaims} upload claim(s) an earlier run of this node left`);
  const shutdown = new AbortController();
  const pending = new Set<Promise<unknown>>();
  let origin = '';
  const publicOrigin = opts.publicUrl?.replace(/\/+$/, '').replace(/\/v1$/, '');

  const ctx: ServiceContext = {
    db,
    clock,
    layout,
    blobs: guardBlobStore(store, (m) => logger.warn(m)),
    fileRedirects: opts.fileRedirects === true,
    signer,
    rate: new RateLimiter(clock, databaseRateStore(db)),
    concurrency: new ConcurrencyLimiter(databaseSlotStore(db), (error) =>
      logger.warn(
        `could not release a concurrency slot yet (retrying; it is no longer renewed, so it frees within ${SLOT_LEASE_MS / 1000} s at the latest): ${String(error)}`,
      ),
    ),
    reservations: databaseReservations(db, node),
    claimHolder: `${holder.node}.${holder.run}`,
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
      ...(publicOrigin !== undefined ? { publicUrl: publicOrigin } : {}),
      // Several nodes: one of them polls each synchronous generation's provider job.
      ...(db.dialect === 'postgres' ? { jobClaims: new ProviderJobClaims(db, timings.providerJobLeaseMs) } : {}),
    },
    generationFinished: (generation, target) => webhooks.generationFinished(generation, target),
    checkWebhookTarget: (url) => checkWebhookTarget(url, webhookPolicy),
    ...(queue ? { generationQueue: queue } : {}),
  };
  opts.onContext?.(ctx);
  // Never a sync at start: the first scheduled one is an interval away (service-sync.ts).
  const catalogSync = await startServiceCatalogSync({
    dataDir,
    db,
    settings,
    env: opts.providerEnv ?? process.env,
    logger,
    node,
    intervalHours: opts.catalogSyncIntervalHours ?? DEFAULT_CATALOG_SYNC_HOURS,
    checkMs: opts.catalogCheckMs ?? DEFAULT_CATALOG_CHECK_MS,
    reload: async () => {
      const next = await loadCatalog(dataDir, operatorDb);
      catalog.reload({ models: [...MODELS, ...next.models], remote: remoteOf(next.offers) });
    },
  });
  undo.push(() => catalogSync.stop());
  // PostgreSQL: provider webhooks reach the node whose runner waits, whichever node they land on.
  // Listening before any job is claimed: the connection is also how other nodes see this one alive.
  let relay: WebhookRelay | undefined;
  if (db.dialect === 'postgres' && opts.database !== undefined) {
    const { startWebhookRelay } = await import('./providers/remote/webhook-relay.ts');
    relay = await startWebhookRelay({
      url: opts.listenDatabase ?? opts.database,
      db,
      hub: ctx.remote.webhooks,
      logger,
      ...(ctx.remote.jobClaims ? { applicationName: ctx.remote.jobClaims.node } : {}),
    });
    ctx.remote.webhookRelay = relay;
    // A start that fails after this point must not leave the connection open (startService).
    undo.push(() => relay?.close());
  }
  // Remote jobs and asynchronous generations a previous run left in flight: finished now, before
  // any request can repeat them.
  const resumed = await resumeGenerations(ctx);
  if (resumed.providerJobs > 0)
    logger.info(
      `resuming ${resumed.providerJobs} provider job${resumed.providerJobs === 1 ? '' : 's'} left by the last run`,
    );
  if (resumed.generations > 0)
    logger.info(`resuming ${resumed.generations} asynchronous generation${resumed.generations === 1 ? '' : 's'}`);
  // This node takes generations from the queue (PostgreSQL), whichever node accepted them.
  await queue?.work((job) => runQueuedGeneration(ctx, job));
  // Webhook deliveries a previous run left pending are sent again (same webhook-id).
  webhooks.start();

  const routes = [
    ...uploadRoutes,
    ...catalogRoutes,
    ...generationRoutes,
    ...routingPreviewRoutes,
    ...asyncGenerationRoutes,
    ...mediaRoutes,
    ...usageRoutes,
    ...fileRoutes,
    ...openApiRoutes,
    ...providerWebhookRoutes,
    ...webhookRoutes,
  ];
  let draining = false;
  const probes = healthProbes({
    database: async () => {
      await db.get('SELECT 1');
    },
    storageDir: layout.tmpDir,
    storage: () => store.check(),
    ...(queue ? { queue: () => queue.check() } : {}),
    draining: () => draining,
    logger,
  });
  const handler = createRequestHandler(ctx, routes, probes);
  // Requests whose response has not ended, so that a graceful stop can wait for them.
  const inFlight = new Set<ServerResponse>();
  let allAnswered: (() => void) | null = null;
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (!draining) return;
      // The connection is idle now: while stopping, nothing more is taken on it.
      setImmediate(() => server.closeIdleConnections());
      if (inFlight.size === 0) allAnswered?.();
    });
    if (draining) res.setHeader('connection', 'close');
    handler(req, res);
  });
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

  // PostgreSQL: this node's claims on provider jobs are renewed, and jobs nobody holds any more (a
  // dead node's) are resumed here, every third of a claim's lease.
  const claims = ctx.remote.jobClaims;
  let claimRound: Promise<void> | null = null;
  const claimTimer = claims
    ? setInterval(() => {
        if (draining || claimRound) return;
        claimRound = (async () => {
          await claims.renew();
          const taken = await resumeProviderJobs(ctx, undefined, { queued: true });
          if (taken > 0)
            logger.info(`resuming ${taken} provider job${taken === 1 ? '' : 's'} another node left unfinished`);
        })()
          .catch((error: unknown) => logger.warn(`could not renew or check provider job claims: ${String(error)}`))
          .finally(() => {
            claimRound = null;
          });
      }, claims.leaseMs / 3)
    : null;
  claimTimer?.unref();

  /** Per-key request counts kept in memory (SQLite; PostgreSQL writes them as it counts) go out now and then. */
  const flushKeyRequests = () => ctx.rate.saveKeyRequests();
  const sweepEvery = opts.sweepIntervalMs ?? 60_000;
  // One node at a time sweeps (a lease in the database); this one skips a round another holds.
  const sweepOnOneNode = createRetentionSweeper(ctx, { node });
  let sweeping: Promise<number> | null = null;
  const sweep = (): Promise<number> => {
    sweeping ??= sweepOnOneNode().finally(() => {
      sweeping = null;
    });
    return sweeping;
  };
  const timer =
    sweepEvery > 0
      ? setInterval(() => {
          flushKeyRequests().catch((error: unknown) => logger.error(`could not save request counts: ${String(error)}`));
          sweep().catch((error: unknown) => logger.error(`retention sweep failed: ${String(error)}`));
        }, sweepEvery)
      : null;
  timer?.unref();

  /** Resolves once every request in flight has been answered, or after `graceMs`; true if all were. */
  const answered = (graceMs: number): Promise<boolean> =>
    new Promise((resolveAnswered) => {
      if (inFlight.size === 0) return resolveAnswered(true);
      if (graceMs <= 0) return resolveAnswered(false);
      const timeout = setTimeout(() => resolveAnswered(inFlight.size === 0), graceMs);
      allAnswered = () => {
        clearTimeout(timeout);
        resolveAnswered(true);
      };
    });

  let closing: Promise<void> | null = null;
  const close = (options: { graceMs?: number } = {}): Promise<void> => {
    closing ??= (async () => {
      draining = true;
      if (timer) clearInterval(timer);
      await catalogSync.stop();
      keyFile.watch.stop();
      // No new generation from the queue; those running here are handed back below.
      await queue
        ?.stopTaking()
        .catch((error: unknown) => logger.warn(`could not stop taking generations: ${String(error)}`));
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      const graceMs = Math.max(0, options.graceMs ?? 0);
      if (inFlight.size > 0 && graceMs > 0)
        logger.info(
          `stopping: waiting up to ${Math.ceil(graceMs / 1000)} s for ${inFlight.size} request${inFlight.size === 1 ? '' : 's'} in flight`,
        );
      if (!(await answered(graceMs)) && graceMs > 0)
        logger.warn(
          `stopping: ${inFlight.size} request${inFlight.size === 1 ? '' : 's'} still in flight after ${Math.ceil(graceMs / 1000)} s are aborted`,
        );
      // Asynchronous generations are handed back here: aborted by shutdown, they stay queued in
      // the database and the next start resumes them (remote jobs through provider_jobs). On
      // PostgreSQL their queue jobs are failed, so another node retries them at once.
      shutdown.abort();
      if (claimTimer) clearInterval(claimTimer);
      await claimRound;
      await Promise.allSettled([...pending]);
      // The provider jobs left here stay recorded: another node may resume them at once.
      await claims
        ?.releaseAll()
        .catch((error: unknown) =>
          logger.warn(`could not hand back provider jobs (their claims lapse): ${String(error)}`),
        );
      await relay?.close();
      await queue
        ?.close()
        .catch((error: unknown) => logger.warn(`could not stop the generation queue: ${String(error)}`));
      // After the generations: one finishing while closing still records its delivery.
      await webhooks.stop();
      server.closeAllConnections();
      await stopped;
      await sweeping?.catch(() => undefined);
      await ctx.concurrency
        .close()
        .catch((error: unknown) => logger.warn(`could not release concurrency slots: ${String(error)}`));
      await ctx.reservations
        .close()
        .catch((error: unknown) => logger.warn(`could not release storage reservations: ${String(error)}`));
      await flushKeyRequests().catch((error: unknown) =>
        logger.error(`could not save request counts: ${String(error)}`),
      );
      await db.close();
    })();
    return closing;
  };

  keyFile.watch.follow();
  return {
    url: `http://${shownHost}:${address.port}/v1`,
    host: shownHost,
    port: address.port,
    close,
    createKey: (o) => createKeyWithWebhookSecret(db, webhookSecrets, clock.now(), o),
    rotateWebhookSecret: (keyId) => webhookSecrets.rotate(keyId, clock.now()),
    revokeKey: (id) => revokeKey(db, clock.now(), id),
    listKeys: (user) => listKeys(db, user),
    setTier: (user, tier) => setTier(db, clock.now(), user, tier),
    setLimits: (user, limits) => setAccountLimits(db, user, limits),
    sweepRetention: sweep,
    stats: {
      maxConcurrent: (user, kind) => ctx.concurrency.maxObserved(user, kind),
      running: (user, kind) => ctx.concurrency.count(user, kind),
      snapshot: () => ctx.concurrency.snapshot(),
    },
    // A new key or address starts the provider's health afresh: the old one's failures (a refused
    // key, a cooldown) say nothing about it.
    setProviderKey: async (id, key) => {
      settings.setAppKey(id, key);
      await providerHealth.reset(id);
    },
    setProviderEnabled: (id, enabled) => settle(() => settings.setEnabled(id, enabled)),
    setProviderBaseUrl: async (id, url) => {
      settings.setBaseUrl(id, url);
      await providerHealth.reset(id);
    },
    testProviderKey: (id, key) => testProviderKey(catalog, id, key),
    providerStatus: async () => {
      await providerHealth.refresh();
      return catalog.providerStatus();
    },
    syncCatalog: (options) => catalogSync.sync(options),
  };
}

/** A synchronous step as a promise that rejects with what it throws (RunningService is all promises). */
function settle<T>(step: () => T): Promise<T> {
  try {
    return Promise.resolve(step());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

const KEY_TEST_TIMEOUT_MS = 20_000;

async function testProviderKey(catalog: Catalog, id: string, key?: string): Promise<ProviderKeyTest> {
  const provider = catalog.remote.find((p) => p.id === id.trim().toLowerCase());
  if (!provider) return { ok: false, message: `unknown provider '${id}'` };
  let apiKey: string;
  try {
    if (key !== undefined) {
      // Validated like a key being stored, so a pasted key with a line break is refused here too.
      const probe = new ProviderSettings({ env: {}, appKeys: { [provider.id]: key } });
      apiKey = probe.key(provider.id)?.key ?? '';
    } else {
      apiKey = catalog.settings.key(provider.id)?.key ?? '';
    }
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  if (apiKey === '') return { ok: false, message: `${provider.name} has no key; add one first` };
  const baseUrl = catalog.settings.baseUrl(provider.id);
  try {
    await provider.adapter.testKey(
      baseUrl === undefined ? { apiKey } : { apiKey, baseUrl },
      AbortSignal.timeout(KEY_TEST_TIMEOUT_MS),
    );
    return { ok: true };
  } catch (error) {
    const message = isProviderError(error)
      ? error.errorClass === 'auth'
        ? `${provider.name} refused the key`
        : error.message
      : `${provider.name} could not be reached to test the key`;
    return { ok: false, message: catalog.redact(message).split(apiKey).join('[redacted]') };
  }
}
