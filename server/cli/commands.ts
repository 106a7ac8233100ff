import { mkdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { TIER_NAMES } from '../../shared/api/index.ts';
import { KeyError, isTierName, listKeys, parsePermissions, revokeKey, setTier } from '../auth/keys.ts';
import { createFileLogger } from '../../shared/node/logger.ts';
import type { Logger } from '../context.ts';
import type { LimitOverrides } from '../limits/account-limits.ts';
import { LIMIT_FIELDS, parseLimitValue, readAccountLimits, setAccountLimits } from '../limits/account-limits.ts';
import { startService } from '../index.ts';
import { SchemaOutOfDateError } from '../../shared/node/migrations.ts';
import { describeDatabase, migrateDatabase, openServiceDatabase } from '../storage/db.ts';
import { loadSigningSecret } from '../storage/secret.ts';
import { UnknownKeyError, WebhookSecrets, createKeyWithWebhookSecret } from '../webhooks/secrets.ts';
import type { Db } from '../storage/db.ts';
import { defaultDataDir } from './data-dir.ts';
import { LOCATION_OPTIONS, resolveListenDatabase, resolveLocations } from './locations.ts';
import { openBlobStore } from '../storage/blobs/index.ts';
import { fsckCommand } from './fsck.ts';
import { providersList, providersRemoveKey, providersSetKey } from './providers.ts';
import { exportCommand, importCommand } from './transfer.ts';
import { UsageError } from './usage-error.ts';

/**
 * How long a stopping `serve` lets requests in flight finish: under the 30 s an orchestrator
 * usually allows between SIGTERM and SIGKILL (Kubernetes' default), with room to close.
 */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 20;

const USAGE = `clipdesk-service — the Media Generation Service v1 (Clipdesk's Local engine)

Usage:
  clipdesk-service serve [--host 127.0.0.1] [--port 8787|0] [--data DIR] [--public-url URL]
                         [--fail-provider SLUG]... [--allow-remote] [--file-url-ttl SECONDS]
                         [--allow-private-image-urls] [--allow-private-webhooks]
                         [--provider-timeout SECONDS] [--shutdown-grace SECONDS] [--no-migrate]
                         [--database postgres://USER@HOST:PORT/DB [--listen-database URL]
                         [--lease-timeout SECONDS] [--generation-workers N]]
                         [--storage s3://BUCKET/PREFIX [--file-redirects]]
  clipdesk-service migrate [--data DIR] [--database postgres://USER@HOST:PORT/DB]
  clipdesk-service fsck [--data DIR] [--database URL] [--storage URL] [--repair] [--min-age SECONDS]
                         [--force] [--json]
  clipdesk-service export --out BUNDLE_DIR [--data DIR] [--storage URL]
  clipdesk-service import --from BUNDLE_DIR [--database URL] [--storage URL] [--data DIR]
  clipdesk-service keys create --user NAME [--tier ${TIER_NAMES.join('|')}] [--name LABEL]
                         [--permissions read,generate,upload] [--data DIR] [--json]
  clipdesk-service keys list --user NAME [--data DIR] [--json]
  clipdesk-service keys revoke KEY_ID [--data DIR]
  clipdesk-service keys rotate-webhook-secret KEY_ID [--data DIR] [--json]
  clipdesk-service users set-tier NAME TIER [--data DIR]
  clipdesk-service users set-limits NAME [--rpm N] [--rph N] [--rpd N] [--images N] [--videos N]
                         [--storage BYTES] [--retention DAYS] [--data DIR]
  clipdesk-service providers list [--data DIR] [--json]
  clipdesk-service providers set-key NAME [--data DIR]     (reads the key from standard input)
  clipdesk-service providers remove-key NAME [--data DIR]

--data defaults to ${defaultDataDir()}
Every command also takes --database URL (or CLIPDESK_DATABASE_URL; default: SQLite in the data
directory) and --storage URL (or CLIPDESK_STORAGE_URL; default: the data directory on disk).
A postgres://USER@HOST:PORT/DB database lets several serve processes (nodes) share one service;
the database also holds the URL signing secret then. Files go to S3 with s3://BUCKET/PREFIX:
endpoint, region and credentials from the AWS SDK's variables (AWS_REGION, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_PROFILE…) plus CLIPDESK_S3_ENDPOINT for S3-compatible stores (MinIO,
R2). --file-redirects answers file URLs with a 302 to the bucket's presigned URL instead of
streaming them through the service. Nodes share one database and one bucket.
fsck lists stored files no row points at and rows whose files are missing (exit 1 if any);
--repair removes such files older than --min-age (default 3600 s: younger ones may be work in
flight), deletes items none of whose files exist (not when more than half of all items look lost,
a wrong --storage, unless --force) and sets received uploads without their bytes back to pending.
export writes a one-machine service (its SQLite database, every stored file and the URL signing
secret) to a new owner-only bundle directory, from one consistent snapshot; import moves a bundle
into an empty database and store (migrated first), verifying every row count and file sha256, and
commits the rows in one transaction after the files (exit 2 if the target holds data). Provider
keys set with providers set-key are not moved: both say which providers had one.
migrate creates or updates the database's schema and exits; serve does the same at start unless
--no-migrate, which refuses a database that needs migrating. On PostgreSQL that includes the
generation queue's schema (pgboss): generations, synchronous or asynchronous, run on any node,
and a node that stops heartbeating for --lease-timeout seconds (or CLIPDESK_LEASE_TIMEOUT; default
30, at least 10) loses its generations to another; each node runs up to --generation-workers of
each kind at once (default 16; 0: a node that only accepts and answers requests).
--listen-database URL (or CLIPDESK_LISTEN_DATABASE_URL; default: the --database URL): the same
PostgreSQL database through an address that keeps a session (PostgreSQL itself, or PgBouncer in
session mode), for the nodes' LISTEN connections (provider webhooks, queue wake-ups) and their
liveness; needed when --database goes through a pooler in transaction mode.
--allow-private-image-urls lets generations fetch image_url from loopback and private addresses
(refused by default: only public addresses, and this service's own URLs, are used).
--allow-private-webhooks lets generations' webhook_url point at loopback and private addresses
(refused by default).
keys create prints the key on stdout and, once, the key's webhook signing secret (whsec_…) on
stderr, labelled; --json prints both in one object (webhookSecret). Nothing can show a secret
again: keys rotate-webhook-secret makes a new one (the old one stops working) and prints it.
--shutdown-grace: on SIGTERM or SIGINT, serve stops accepting connections and lets requests in
flight finish for up to SECONDS (default ${DEFAULT_SHUTDOWN_GRACE_SECONDS}); then it aborts the rest (asynchronous
generations resume at the next start) and exits 0. A second signal exits at once.
--provider-timeout cancels an AI provider's job at the provider after SECONDS (default 900) and
falls back to the next provider.
The local providers are procedural renderers built on ffmpeg, not AI.
AI providers (fal, replicate, google, runway, luma, openai) need a key: FAL_KEY, REPLICATE_API_TOKEN,
GEMINI_API_KEY, RUNWAYML_API_SECRET, LUMAAI_API_KEY, OPENAI_API_KEY in the environment, or one stored
with providers set-key (owner-only, in the data directory; a stored key wins over the environment).
CLIPDESK_<ID>_BASE_URL (e.g. CLIPDESK_REPLICATE_BASE_URL) points a provider at another http(s) base.
Operators change prices and add models in DATA/catalog.json.
`;

export { UsageError };

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Where `providers set-key` reads the key from (never argv). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Runs one command; resolves with the exit code. `serve` resolves only when the server stops. */
export async function runCli(argv: string[], io: Io, signals: { onStop(stop: () => void): void }): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  try {
    if (command === 'serve') return await serve(sub === undefined ? [] : [sub, ...rest], io, signals);
    if (command === 'migrate') return await migrateCommand(sub === undefined ? [] : [sub, ...rest], io);
    if (command === 'fsck') return await fsckCommand(sub === undefined ? [] : [sub, ...rest], io);
    if (command === 'export') return await exportCommand(sub === undefined ? [] : [sub, ...rest], io);
    if (command === 'import') return await importCommand(sub === undefined ? [] : [sub, ...rest], io);
    if (command === 'keys' && sub === 'create') return await withDb(rest, io, keysCreate);
    if (command === 'keys' && sub === 'list') return await withDb(rest, io, keysList);
    if (command === 'keys' && sub === 'revoke') return await withDb(rest, io, keysRevoke);
    if (command === 'keys' && sub === 'rotate-webhook-secret') return await withDb(rest, io, keysRotateWebhookSecret);
    if (command === 'users' && sub === 'set-tier') return await withDb(rest, io, usersSetTier);
    // `users set-limits --storage BYTES` is the account's storage quota (it came first): there the
    // storage location comes from CLIPDESK_STORAGE_URL alone.
    if (command === 'users' && sub === 'set-limits')
      return await withDb(rest, io, usersSetLimits, { storageFlag: false });
    if (command === 'providers' && sub === 'list') return await providersList(rest, io);
    if (command === 'providers' && sub === 'set-key') return await providersSetKey(rest, io);
    if (command === 'providers' && sub === 'remove-key') return await providersRemoveKey(rest, io);
    throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(' ')}`);
  } catch (error) {
    if (
      error instanceof UsageError ||
      error instanceof KeyError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      io.err(`clipdesk-service: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`clipdesk-service: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function serve(args: string[], io: Io, signals: { onStop(stop: () => void): void }): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8787' },
      ...LOCATION_OPTIONS,
      'no-migrate': { type: 'boolean', default: false },
      'public-url': { type: 'string' },
      'fail-provider': { type: 'string', multiple: true },
      'allow-remote': { type: 'boolean', default: false },
      'file-url-ttl': { type: 'string' },
      'allow-private-image-urls': { type: 'boolean', default: false },
      'allow-private-webhooks': { type: 'boolean', default: false },
      'provider-timeout': { type: 'string' },
      'shutdown-grace': { type: 'string' },
      'file-redirects': { type: 'boolean', default: false },
      'lease-timeout': { type: 'string' },
      'generation-workers': { type: 'string' },
      'listen-database': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  // The flag, else CLIPDESK_LEASE_TIMEOUT (the same on every node of a deployment).
  const leaseText = values['lease-timeout'] ?? (process.env['CLIPDESK_LEASE_TIMEOUT'] || undefined);
  const lease = leaseText === undefined ? undefined : Number(leaseText);
  if (lease !== undefined && (!Number.isInteger(lease) || lease < 10))
    throw new UsageError(`--lease-timeout must be a whole number of seconds, at least 10, not ${leaseText}`);
  const workers = values['generation-workers'] === undefined ? undefined : Number(values['generation-workers']);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0))
    throw new UsageError(
      `--generation-workers must be a whole number, at least 0, not ${values['generation-workers']}`,
    );
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be 0 to 65535, not ${values.port}`);
  const ttl = values['file-url-ttl'] === undefined ? undefined : Number(values['file-url-ttl']);
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1))
    throw new UsageError(`--file-url-ttl must be a whole number of seconds, at least 1, not ${values['file-url-ttl']}`);
  const timeout = values['provider-timeout'] === undefined ? undefined : Number(values['provider-timeout']);
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1))
    throw new UsageError(
      `--provider-timeout must be a whole number of seconds, at least 1, not ${values['provider-timeout']}`,
    );
  const grace = Number(values['shutdown-grace'] ?? DEFAULT_SHUTDOWN_GRACE_SECONDS);
  if (!Number.isInteger(grace) || grace < 0)
    throw new UsageError(`--shutdown-grace must be a whole number of seconds, not ${values['shutdown-grace']}`);
  const locations = resolveLocations(values);
  const { dataDir, database } = locations;
  const listenDatabase = resolveListenDatabase(values['listen-database'], database);
  if (values['file-redirects'] && locations.storage.kind !== 's3')
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
  const service = await startService({
    dataDir,
    ...(store ? { store, fileRedirects: values['file-redirects'] } : {}),
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
    migrate: !values['no-migrate'],
    host: values.host,
    port,
    publicUrl: values['public-url'],
    failProviders: values['fail-provider'],
    allowRemote: values['allow-remote'],
    fileUrlTtlSeconds: ttl,
    allowPrivateImageUrls: values['allow-private-image-urls'],
    allowPrivateWebhooks: values['allow-private-webhooks'],
    ...(timeout !== undefined ? { remoteTimings: { timeoutMs: timeout * 1000 } } : {}),
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
async function migrateCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { ...LOCATION_OPTIONS }, strict: true, allowPositionals: false });
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
    const { migrateGenerationQueue, QUEUE_SCHEMA } = await import('../media/generation-queue.ts');
    await migrateGenerationQueue(locations.database.url);
    io.out(`the generation queue (schema ${QUEUE_SCHEMA}) is installed and up to date`);
  } else {
    const { dataDir } = locations;
    await mkdir(dataDir, { recursive: true });
    what = describeDatabase(dataDir);
    result = migrateDatabase(dataDir);
  }
  for (const step of result.applied) io.out(`applied schema version ${step.version}: ${step.name}`);
  io.out(`${what} is ${result.applied.length === 0 ? 'already' : 'now'} at schema version ${result.version}`);
  return 0;
}

async function withDb(
  args: string[],
  io: Io,
  run: (db: Db, args: string[], io: Io, dataSecret: Buffer) => Promise<number>,
  { storageFlag = true }: { storageFlag?: boolean } = {},
): Promise<number> {
  const { storage: _storage, ...withoutStorage } = LOCATION_OPTIONS;
  const options = storageFlag ? LOCATION_OPTIONS : withoutStorage;
  const { values } = parseArgs({ args, options: { ...LOCATION_OPTIONS }, strict: false, allowPositionals: true });
  const { dataDir, database } = resolveLocations({
    data: values.data,
    database: values.database,
    ...(storageFlag ? { storage: values.storage } : {}),
  });
  await mkdir(dataDir, { recursive: true });
  const db = await openServiceDatabase(database);
  try {
    // The service's secret seals webhook signing secrets (server/webhooks/secrets.ts).
    const secret = await loadSigningSecret(db, dataDir, db.description);
    return await run(db, stripLocations(args, Object.keys(options)), io, secret);
  } finally {
    await db.close();
  }
}

/** `--data`, `--database` and `--storage` were consumed by withDb; each command parses the rest strictly. */
function stripLocations(args: string[], consumed: readonly string[]): string[] {
  const names = consumed.map((n) => `--${n}`);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (names.includes(a)) i++;
    else if (!names.some((n) => a.startsWith(`${n}=`))) out.push(a);
  }
  return out;
}

async function keysCreate(db: Db, args: string[], io: Io, dataSecret: Buffer): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      user: { type: 'string' },
      tier: { type: 'string' },
      name: { type: 'string' },
      permissions: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
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
async function keysRotateWebhookSecret(db: Db, args: string[], io: Io, dataSecret: Buffer): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { json: { type: 'boolean', default: false } },
    strict: true,
    allowPositionals: true,
  });
  const [id, extra] = positionals;
  if (id === undefined || extra !== undefined) throw new UsageError('keys rotate-webhook-secret takes one KEY_ID');
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

async function keysList(db: Db, args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { user: { type: 'string' }, json: { type: 'boolean', default: false } },
    strict: true,
  });
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

async function keysRevoke(db: Db, args: string[], io: Io): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
  const [id, extra] = positionals;
  if (id === undefined || extra !== undefined) throw new UsageError('keys revoke takes one KEY_ID');
  if (!(await revokeKey(db, Date.now(), id))) {
    io.err(`clipdesk-service: no key ${id}`);
    return 1;
  }
  io.out(`revoked ${id}`);
  return 0;
}

async function usersSetTier(db: Db, args: string[], io: Io): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, strict: true, allowPositionals: true });
  const [user, tier, extra] = positionals;
  if (user === undefined || tier === undefined || extra !== undefined)
    throw new UsageError('users set-tier takes NAME TIER');
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
async function usersSetLimits(db: Db, args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: Object.fromEntries(LIMIT_FIELDS.map((f) => [f.flag, { type: 'string' as const }])),
    strict: true,
    allowPositionals: true,
  });
  const [user, extra] = positionals;
  if (user === undefined || extra !== undefined) throw new UsageError('users set-limits takes one NAME');
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
