import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { systemClock } from '../shared/clock.ts';
import { takeDataFolderLock, type DataFolderLock } from '../shared/node/data-folder-lock.ts';
import type { Logger } from './logger.ts';
import { silentLogger } from './logger.ts';
import { isLoopbackHost } from './net/public-address.ts';
import type { GenerationQueue } from './storage/generation-queue.ts';
import { claimHolder } from './uploads/claim-node.ts';
import { clearDeadClaims } from './uploads/receive-claim.ts';
import { openServiceDatabase } from './storage/db.ts';
import type { SqlDatabase } from './storage/sql/types.ts';
import { Layout } from './storage/layout.ts';
import { mediaExists } from './storage/media-repo.ts';
import { loadSigningSecret } from './storage/secret.ts';
import { UrlSigner } from './storage/signing.ts';
import { resumeLeftWork, startProviderWebhookRelay } from './service/background.ts';
import { openBlobStore } from './service/blob-store.ts';
import { buildServiceContext, publicOrigin } from './service/build-context.ts';
import { wireClientWebhooks } from './service/client-webhooks.ts';
import { closeOnce } from './service/close.ts';
import { serveHttp } from './service/http-server.ts';
import type { RunningService, StartServiceOptions } from './service/options.ts';
import { startCatalogSync, wireProviders } from './service/providers.ts';
import { startRounds } from './service/rounds.ts';
import { runningService } from './service/running.ts';

export type { CreatedKey, KeyInfo } from './auth/api-keys.ts';
export type { Logger } from './logger.ts';
export type { ProviderStatus } from './catalog/catalog.ts';
export { CatalogFileError } from './providers/catalog-file/load.ts';
export { ProviderSettingsError } from './providers/provider-keys.ts';
export type { LimitOverrides } from './limits/account-limits.ts';
export type { RemoteProviderId } from './providers/remote/contract.ts';
export type { WebhookTimings } from './webhooks/dispatcher.ts';
export type {
  ProviderKeyTest,
  RemoteTimings,
  RunningService,
  ServiceStats,
  StartServiceOptions,
} from './service/options.ts';

export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && opts.allowRemote !== true) {
    throw new Error(`refusing to listen on non-loopback host ${host} without allowRemote (--allow-remote)`);
  }
  const dataDir = resolve(opts.dataDir);
  await mkdir(dataDir, { recursive: true });
  // One service per SQLite data folder, held until close or death: a second one would take the
  // first one's running generations for a crash's orphans and run them again (docs/service.md,
  // "One service per data folder"). PostgreSQL nodes share a database and coordinate by leases.
  const folderLock =
    opts.database === undefined && opts.dataFolderLock !== false
      ? takeDataFolderLock(dataDir, { program: opts.program ?? 'a Clipdesk service' })
      : null;
  try {
    const service = await startOnDatabase(opts, host, dataDir);
    if (folderLock === null) return service;
    folderLock.setUrl(service.url);
    return withLockReleasedOnClose(service, folderLock);
  } catch (error) {
    folderLock?.release();
    throw error;
  }
}

/** close() lets go of the folder's lock once everything else has stopped. */
function withLockReleasedOnClose(service: RunningService, lock: DataFolderLock): RunningService {
  const close = service.close.bind(service);
  service.close = async (options) => {
    try {
      await close(options);
    } finally {
      lock.release();
    }
  };
  return service;
}

async function startOnDatabase(opts: StartServiceOptions, host: string, dataDir: string): Promise<RunningService> {
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

/**
 * The rest of startService, on the database it opened (which it closes should this fail): each
 * part in server/service/, in the order the service starts (and, in close.ts, stops).
 */
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
  // A store that cannot be reached stops the start, named, before anything is served (startService
  // closes the database).
  const store = await openBlobStore(dataDir, opts);
  const dataSecret = await loadSigningSecret(db, dataDir, db.description);
  const signer = new UrlSigner(dataSecret);
  const webhooks = wireClientWebhooks(db, dataSecret, logger, opts);
  // Files a kill left without a row. Only where this process is the one service on its files (disk
  // and SQLite): in a bucket, or on a disk nodes on one PostgreSQL database share, another node's
  // item may be between its files and its row (`fsck` has a minimum age).
  if (opts.store === undefined && db.dialect === 'sqlite') await layout.removeOrphans((id) => mediaExists(db, id));

  // Bad keys, base URLs and catalog files stop the service here, with the file and line or the
  // setting's name (never the key itself).
  const providers = await wireProviders(dataDir, db, logger, opts);
  // This process among the nodes on one database: its storage reservations and the sweep's lease.
  const node = randomUUID();
  // Upload claims its earlier runs left (a PUT cut by kill -9) go now: a resend is received at once.
  const holder = await claimHolder(dataDir);
  const deadClaims = await clearDeadClaims(db, holder);
  if (deadClaims > 0) logger.info(`released ${deadClaims} upload claim(s) an earlier run of this node left`);

  const wired = buildServiceContext(
    { db, clock, layout, store, signer, logger, node, holder, providers, webhooks, queue },
    opts,
  );
  const { ctx } = wired;
  opts.onContext?.(ctx);
  // Never a sync at start: the first scheduled one is an interval away (service-sync.ts).
  const catalogSync = await startCatalogSync({ dataDir, db, logger, node }, providers, opts);
  undo.push(() => catalogSync.stop());
  // PostgreSQL: provider webhooks reach the node whose runner waits, whichever node they land on.
  // Listening before any job is claimed: the connection is also how other nodes see this one alive.
  const relay = await startProviderWebhookRelay(ctx, db, logger, opts);
  // A start that fails after this point must not leave the connection open (startService).
  if (relay) undo.push(() => relay.close());
  // Remote jobs and asynchronous generations a previous run left in flight: finished now, before
  // any request can repeat them.
  await resumeLeftWork(ctx, logger);
  // This node takes generations from the queue (PostgreSQL), whichever node accepted them.
  await queue?.work((job) => ctx.generations.runQueued(job));
  // Webhook deliveries a previous run left pending are sent again (same webhook-id).
  webhooks.dispatcher.start();

  const http = await serveHttp(
    ctx,
    { db, storageDir: layout.tmpDir, store, queue, logger },
    { host, port: opts.port ?? 0 },
  );
  wired.setOrigin(opts.publicUrl ? publicOrigin(opts.publicUrl) : `http://${http.shownHost}:${http.port}`);
  const rounds = startRounds(ctx, { node, logger, sweepIntervalMs: opts.sweepIntervalMs, draining: http.draining });
  const close = closeOnce({
    http,
    rounds,
    catalogSync,
    keyFileWatch: providers.keyFileWatch,
    queue,
    shutdown: wired.shutdown,
    pending: wired.pending,
    claims: ctx.remote.jobClaims,
    relay,
    webhooks: webhooks.dispatcher,
    concurrency: ctx.concurrency,
    reservations: ctx.reservations,
    db,
    logger,
  });

  providers.keyFileWatch.follow();
  return runningService({
    http,
    close,
    db,
    clock,
    webhookSecrets: webhooks.secrets,
    sweep: rounds.sweep,
    concurrency: ctx.concurrency,
    providers,
    catalogSync,
  });
}
