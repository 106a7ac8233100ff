import { mkdir } from 'node:fs/promises';
import { TIER_NAMES } from '../../shared/api/index.ts';
import { isTierName, listKeys, parsePermissions, revokeKey, setTier } from '../auth/api-keys.ts';
import { DataFolderInUseError, dataFolderOwner } from '../../shared/node/data-folder-lock.ts';
import { createFileLogger } from '../../shared/node/logger.ts';
import type { Logger } from '../logger.ts';
import type { LimitOverrides } from '../limits/account-limits.ts';
import { LIMIT_FIELDS, parseLimitValue, readAccountLimits, setAccountLimits } from '../limits/account-limits.ts';
import { SchemaOutOfDateError } from '../../shared/node/migrations.ts';
import { describeDatabase, migrateDatabase, openServiceDatabase } from '../storage/db.ts';
import { loadSigningSecret } from '../storage/secret.ts';
import { UnknownKeyError, WebhookSecrets, createKeyWithWebhookSecret } from '../webhooks/secrets.ts';
import type { Db } from '../storage/db.ts';
import { resolveListenDatabase, resolveLocations } from './locations.ts';
import { openBlobStore } from '../storage/blobs/index.ts';
import { UsageError } from './usage-error.ts';

/**
 * How long a stopping `serve` lets requests in flight finish: under the 30 s an orchestrator
 * usually allows between SIGTERM and SIGKILL (Kubernetes' default), with room to close.
 */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 20;

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Where `providers set-key` reads the key from (never argv). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** `--data`, `--database`, `--storage` as parsed (server/cli/locations.ts reads them). */
export interface LocationValues {
  data?: string;
  database?: string;
  storage?: string;
}

export interface ServeValues extends LocationValues {
  host: string;
  port: string;
  migrate: boolean;
  publicUrl?: string;
  failProvider?: string[];
  allowRemote?: boolean;
  fileUrlTtl?: string;
  allowPrivateImageUrls?: boolean;
  allowPrivateWebhooks?: boolean;
  providerTimeout?: string;
  shutdownGrace?: string;
  fileRedirects?: boolean;
  leaseTimeout?: string;
  generationWorkers?: string;
  listenDatabase?: string;
  catalogSyncInterval?: string;
}

export async function serve(values: ServeValues, io: Io, signals: { onStop(stop: () => void): void }): Promise<number> {
  // The flag, else CLIPDESK_LEASE_TIMEOUT (the same on every node of a deployment).
  const leaseText = values.leaseTimeout ?? (process.env['CLIPDESK_LEASE_TIMEOUT'] || undefined);
  const lease = leaseText === undefined ? undefined : Number(leaseText);
  if (lease !== undefined && (!Number.isInteger(lease) || lease < 10))
    throw new UsageError(`--lease-timeout must be a whole number of seconds, at least 10, not ${leaseText}`);
  const workers = values.generationWorkers === undefined ? undefined : Number(values.generationWorkers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0))
    throw new UsageError(`--generation-workers must be a whole number, at least 0, not ${values.generationWorkers}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be 0 to 65535, not ${values.port}`);
  const ttl = values.fileUrlTtl === undefined ? undefined : Number(values.fileUrlTtl);
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1))
    throw new UsageError(`--file-url-ttl must be a whole number of seconds, at least 1, not ${values.fileUrlTtl}`);
  const timeout = values.providerTimeout === undefined ? undefined : Number(values.providerTimeout);
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    throw new UsageError(
      `--provider-timeout must be a whole number of seconds, at least 1, not ${values.providerTimeout}`,
    );
  const syncHours = values.catalogSyncInterval === undefined ? undefined : Number(values.catalogSyncInterval);
  // At most 500 hours: a timer's longest wait is about 24 days.
  if (syncHours !== undefined && (!Number.isFinite(syncHours) || syncHours < 0 || syncHours > 500))
    throw new UsageError(
      `--catalog-sync-interval must be a number of hours from 0 (off) to 500, not ${values.catalogSyncInterval}`,
    );
  const grace = Number(values.shutdownGrace ?? DEFAULT_SHUTDOWN_GRACE_SECONDS);
  if (!Number.isInteger(grace) || grace < 0)
    throw new UsageError(`--shutdown-grace must be a whole number of seconds, not ${values.shutdownGrace}`);
  const locations = resolveLocations(values);
  const { dataDir, database } = locations;
  const listenDatabase = resolveListenDatabase(values.listenDatabase, database);
  if (values.fileRedirects === true && locations.storage.kind !== 's3')
    throw new UsageError(
      '--file-redirects needs S3 storage (--storage s3://BUCKET/PREFIX): disk has no presigned URLs',
    );
  // Listening for the stop signal from here on: one that arrives while the service starts, or
  // right after it said it listens, stops it as cleanly as a later one (it would otherwise kill
  // the process outright).
  const stopRequested = new Promise<void>((resolveStop) => signals.onStop(resolveStop));
  // The operator reads stderr; the rotating file at logFilePath(dataDir, 'service') keeps it all.
  const log = createFileLogger({ dataDir, program: 'service' });
  const logger: Logger = {
    info: (m) => (log.logger.info(m), io.err(m)),
    warn: (m) => (log.logger.warn(m), io.err(`warning: ${m}`)),
    error: (m) => (log.logger.error(m), io.err(`error: ${m}`)),
  };
  // The disk store is startService's default; a bucket's client is ours to close.
  const store = locations.storage.kind === 's3' ? await openBlobStore(locations.storage) : undefined;
  // Loaded here, not at the top: the service is most of what the CLI would load, and the other
  // commands need none of it (docs/testing.md, "What a process costs to start").
  const { startService } = await import('../index.ts');
  const service = await startService({
    dataDir,
    ...(store ? { store, fileRedirects: values.fileRedirects === true } : {}),
    ...(database.kind === 'postgres'
      ? {
          database: database.url,
          ...(listenDatabase !== undefined ? { listenDatabase } : {}),
          generationQueue: {
            ...(lease !== undefined ? { leaseSeconds: lease } : {}),
            ...(workers !== undefined ? { workers } : {}),
          },
        }
      : {}),
    migrate: values.migrate,
    host: values.host,
    port,
    publicUrl: values.publicUrl,
    failProviders: values.failProvider,
    allowRemote: values.allowRemote === true,
    fileUrlTtlSeconds: ttl,
    allowPrivateImageUrls: values.allowPrivateImageUrls === true,
    allowPrivateWebhooks: values.allowPrivateWebhooks === true,
    ...(timeout !== undefined ? { remoteTimings: { timeoutMs: timeout * 1000 } } : {}),
    ...(syncHours !== undefined ? { catalogSyncIntervalHours: syncHours } : {}),
    program: 'clipdesk-service serve',
    logger,
  }).catch(async (error: unknown) => {
    store?.close();
    await log.close();
    if (error instanceof SchemaOutOfDateError)
      throw new Error(
        `${error.message}. Run \`clipdesk-service migrate ${database.kind === 'postgres' ? '--database URL' : `--data ${dataDir}`}\` first, or start serve without --no-migrate.`,
      );
    throw error;
  });
  io.out(`listening on ${service.url}`);
  log.logger.info({ url: service.url }, 'listening');
  await stopRequested;
  // Requests in flight finish within the grace period; then running generations are aborted, and
  // stopping waits for that and for their ffmpeg children to exit.
  await service.close({ graceMs: grace * 1000 });
  store?.close();
  log.logger.info('stopped');
  await log.close();
  return 0;
}

/**
 * `clipdesk-service migrate`: brings the database to this build's schema and exits (0 also when
 * there was nothing to do). Two at once are safe: see migrateDatabase. A database written by a
 * newer build is refused, untouched (exit 1).
 */
export async function migrateCommand(values: LocationValues, io: Io): Promise<number> {
  // Files are not the schema's: a --storage location is accepted and left alone.
  const locations = resolveLocations(values);
  let what: string;
  let result: { applied: Array<{ version: number; name: string }>; version: number };
  if (locations.database.kind === 'postgres') {
    // Loaded only for PostgreSQL: the embedded engine and SQLite commands do without the driver.
    const { describePostgres, migratePostgres } = await import('../storage/pg/migrate.ts');
    what = describePostgres(locations.database.url);
    result = await migratePostgres(locations.database.url);
    // pg-boss's own schema (`pgboss`), versioned and locked by pg-boss itself.
    const { migrateGenerationQueue, QUEUE_SCHEMA } = await import('../storage/generation-queue.ts');
    await migrateGenerationQueue(locations.database.url);
    io.out(`the generation queue (schema ${QUEUE_SCHEMA}) is installed and up to date`);
  } else {
    const { dataDir } = locations;
    await mkdir(dataDir, { recursive: true });
    what = describeDatabase(dataDir);
    // Never under a running service: it would go on on a schema it was not built for
    // (docs/service.md, "One service per data folder"). Two migrates at once stay safe (above).
    const served = dataFolderOwner(dataDir);
    if (served.held) throw new DataFolderInUseError(dataDir, served.owner);
    result = migrateDatabase(dataDir);
  }
  for (const step of result.applied) io.out(`applied schema version ${step.version}: ${step.name}`);
  io.out(`${what} is ${result.applied.length === 0 ? 'already' : 'now'} at schema version ${result.version}`);
  return 0;
}

/** Opens the service database of `locations` (migrated) with its signing secret, runs `run`, closes it. */
export async function withDb(
  locations: LocationValues,
  run: (db: Db, dataSecret: Buffer) => Promise<number>,
): Promise<number> {
  const { dataDir, database } = resolveLocations(locations);
  await mkdir(dataDir, { recursive: true });
  const db = await openServiceDatabase(database);
  try {
    // The service's secret seals webhook signing secrets (server/webhooks/secrets.ts).
    const secret = await loadSigningSecret(db, dataDir, db.description);
    return await run(db, secret);
  } finally {
    await db.close();
  }
}

export async function keysCreate(
  db: Db,
  values: { user?: string; tier?: string; name?: string; permissions?: string; json?: boolean },
  io: Io,
  dataSecret: Buffer,
): Promise<number> {
  if (!values.user) throw new UsageError('keys create needs --user NAME');
  if (values.tier !== undefined && !isTierName(values.tier))
    throw new UsageError(`--tier must be one of ${TIER_NAMES.join(', ')}`);
  const created = await createKeyWithWebhookSecret(db, new WebhookSecrets(db, dataSecret), Date.now(), {
    user: values.user,
    tier: values.tier,
    name: values.name,
    permissions: values.permissions === undefined ? undefined : parsePermissions(values.permissions),
  });
  if (values.json) {
    const { id, key, user, tier, name, webhookSecret } = created;
    io.out(JSON.stringify({ id, key, user, tier, name, webhookSecret }));
    return 0;
  }
  // stdout stays the key alone (scripts capture it); its name and secret go to the operator's terminal.
  io.out(created.key);
  if (values.name === undefined || values.name.trim() === '')
    io.err(`named the key '${created.name}' (choose a name with --name LABEL)`);
  io.err(`webhook signing secret (shown once; verifies this key's webhook deliveries): ${created.webhookSecret}`);
  return 0;
}

/** A key's new webhook signing secret, printed once; the old one signs beside it for a day (secrets.ts). */
export async function keysRotateWebhookSecret(
  db: Db,
  id: string | undefined,
  values: { json?: boolean },
  io: Io,
  dataSecret: Buffer,
): Promise<number> {
  if (id === undefined) throw new UsageError('keys rotate-webhook-secret takes one KEY_ID');
  let secret: string;
  try {
    secret = await new WebhookSecrets(db, dataSecret).rotate(id, Date.now());
  } catch (error) {
    if (!(error instanceof UnknownKeyError)) throw error;
    io.err(`clipdesk-service: no key ${id}`);
    return 1;
  }
  io.out(values.json ? JSON.stringify({ id, webhookSecret: secret }) : secret);
  return 0;
}

export async function keysList(db: Db, values: { user?: string; json?: boolean }, io: Io): Promise<number> {
  if (!values.user) throw new UsageError('keys list needs --user NAME');
  const keys = await listKeys(db, values.user);
  if (values.json) {
    io.out(JSON.stringify(keys));
    return 0;
  }
  if (keys.length === 0) io.err(`no keys for user ${values.user}`);
  for (const k of keys) {
    io.out(
      `${k.id}\t${k.name}\t…${k.last4}\t${k.permissions.join(',')}\t${k.createdAt}\t${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`,
    );
  }
  return 0;
}

export async function keysRevoke(db: Db, id: string | undefined, io: Io): Promise<number> {
  if (id === undefined) throw new UsageError('keys revoke takes one KEY_ID');
  if (!(await revokeKey(db, Date.now(), id))) {
    io.err(`clipdesk-service: no key ${id}`);
    return 1;
  }
  io.out(`revoked ${id}`);
  return 0;
}

export async function usersSetTier(
  db: Db,
  user: string | undefined,
  tier: string | undefined,
  io: Io,
): Promise<number> {
  if (user === undefined || tier === undefined) throw new UsageError('users set-tier takes NAME TIER');
  if (!isTierName(tier)) throw new UsageError(`TIER must be one of ${TIER_NAMES.join(', ')}`);
  await setTier(db, Date.now(), user, tier);
  io.out(`${user} is now on the ${tier} tier`);
  return 0;
}

/**
 * Per-account limits over the tier's (the spec's Enterprise "custom"): requests per minute, hour
 * and day, concurrent images and videos, storage bytes and retention days. Named limits are
 * replaced, the others kept; the running service applies them from the next request.
 */
export async function usersSetLimits(
  db: Db,
  user: string | undefined,
  values: Partial<Record<(typeof LIMIT_FIELDS)[number]['flag'], string>>,
  io: Io,
): Promise<number> {
  if (user === undefined) throw new UsageError('users set-limits takes one NAME');
  const overrides: LimitOverrides = {};
  for (const f of LIMIT_FIELDS) {
    const text = values[f.flag];
    if (typeof text !== 'string') continue;
    try {
      overrides[f.key] = parseLimitValue(f.flag, text);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  if (Object.keys(overrides).length === 0)
    throw new UsageError(`users set-limits needs at least one of ${LIMIT_FIELDS.map((f) => `--${f.flag}`).join(', ')}`);
  if (!(await setAccountLimits(db, user, overrides))) {
    io.err(`clipdesk-service: no user ${user} (create one with keys create --user ${user})`);
    return 1;
  }
  const account = await readAccountLimits(db, user);
  if (!account) throw new Error(`user ${user} vanished`);
  const l = account.limits;
  io.out(
    `${user} (${account.tier} tier) now has: ${l.rate.minute}/minute, ${l.rate.hour}/hour, ${l.rate.day}/day requests; ` +
      `${l.concurrency.image} images and ${l.concurrency.video} videos at once; ` +
      `${l.storageBytes} bytes of storage, kept ${l.retentionDays} days`,
  );
  return 0;
}
