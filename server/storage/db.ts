import { join } from 'node:path';
import type { Migration } from '../../shared/node/migrations.ts';
import { latestVersion, migrate, requireCurrentSchema, schemaVersion } from '../../shared/node/migrations.ts';
import { openSqlite } from '../../shared/node/sqlite.ts';
import { SqliteSql } from './sql/sqlite.ts';
import type { Sql, SqlDatabase } from './sql/types.ts';

/**
 * The service's rows: the embedded SQLite file (node:sqlite, WAL) by default, or PostgreSQL
 * (server/storage/sql). Modules take this handle, which is the database or a transaction's handle
 * alike. Files are not here: they live in the BlobStore (server/storage/blobs), beside the SQLite
 * file in the data directory on disk by default, or in a bucket. A media row is only inserted
 * after all its files are stored, so a row always points at complete files.
 */
export type Db = Sql;

// Version 1 is the schema the service shipped without a version; its IF NOT EXISTS clauses make it
// adopt such a database as it is.
const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  tier TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  hash TEXT NOT NULL,
  last4 TEXT NOT NULL,
  permissions TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  requests INTEGER NOT NULL DEFAULT 0,
  cost REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS api_keys_user ON api_keys(user_id);
CREATE TABLE IF NOT EXISTS media (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  user_id TEXT NOT NULL,
  key_id TEXT,
  kind TEXT NOT NULL,
  model TEXT NOT NULL,
  model_version TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  provider_slug TEXT NOT NULL,
  provider_name TEXT NOT NULL,
  prompt TEXT NOT NULL,
  size TEXT NOT NULL,
  duration REAL NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  mime TEXT NOT NULL,
  files TEXT NOT NULL,
  thumbnail TEXT,
  bytes INTEGER NOT NULL,
  price REAL NOT NULL,
  public INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  downloaded_at INTEGER
);
CREATE INDEX IF NOT EXISTS media_user_created ON media(user_id, created_at, seq);
CREATE INDEX IF NOT EXISTS media_public_created ON media(public, created_at, seq);
-- Covers the listing's visibility and filter columns, so counts and pages walk a narrow index in
-- created order instead of wide rows (prompts, file lists).
CREATE INDEX IF NOT EXISTS media_listing ON media(created_at, seq, user_id, public, kind, size, model, model_version, provider_id);
CREATE INDEX IF NOT EXISTS media_expires ON media(expires_at) WHERE expires_at IS NOT NULL AND downloaded_at IS NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS media_fts USING fts5(prompt, content='media', content_rowid='seq', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS media_fts_insert AFTER INSERT ON media BEGIN
  INSERT INTO media_fts(rowid, prompt) VALUES (new.seq, new.prompt);
END;
CREATE TRIGGER IF NOT EXISTS media_fts_delete AFTER DELETE ON media BEGIN
  INSERT INTO media_fts(media_fts, rowid, prompt) VALUES ('delete', old.seq, old.prompt);
END;
CREATE TABLE IF NOT EXISTS uploads (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  filename TEXT NOT NULL,
  declared_mime TEXT NOT NULL,
  size INTEGER NOT NULL,
  state TEXT NOT NULL,
  sniffed_mime TEXT,
  media_id TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency (
  user_id TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, key)
);
CREATE TABLE IF NOT EXISTS settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
`;

// Version 2: rate counters survive a restart (one row per user and window, written on each counted
// request), and per-account limits set by `users set-limits` (NULL keeps the tier's value).
const SCHEMA_V2 = `
CREATE TABLE rate_windows (
  user_id TEXT NOT NULL,
  window TEXT NOT NULL,
  start INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (user_id, window)
) WITHOUT ROWID;
CREATE TABLE user_limits (
  user_id TEXT PRIMARY KEY REFERENCES users(id),
  rpm INTEGER,
  rph INTEGER,
  rpd INTEGER,
  images INTEGER,
  videos INTEGER,
  storage_bytes INTEGER,
  retention_days INTEGER
);
`;

/**
 * How `GET /media` finds and counts without walking rows (version 3). Measured on 100,000 items,
 * the listing spent its time evaluating `user_id = ? OR public = 1` and the filters row by row,
 * counting every match for `total`, and stepping over OFFSET rows one by one.
 *
 * - `ord` is the listing's order as one integer: created_at × 1024 plus the item's rank among
 *   items created in the same millisecond (in insertion order), so (created_at, seq) order is
 *   ord order. It stays below 2^53, so it reads back as a JavaScript number.
 * - `media_find` is a contentless FTS5 index whose rowid is `ord`: it answers search, visibility
 *   and the filters in one MATCH, in listing order, so a page reads only its own rows. The
 *   trigram `prompt` column gives substring search of three characters or more. The other
 *   columns each hold one trigram: a token standing for a value (media_terms), so a filter on
 *   them is exact, never a substring match.
 * - `media_grams` is the same for one- and two-character searches, which a trigram index cannot
 *   find: `grams` holds each distinct character of the prompt padded with two U+FFFF, and each
 *   distinct pair padded with one, so such a search is one token. Windows that straddle two grams
 *   start with U+FFFF or have it in the middle, so they never equal such a token. Single tokens
 *   need no positions (detail = none), which keeps this index a fraction of media_find's size.
 * - `media_counts` (per owner) and `media_public_counts` (public items of every owner) count
 *   items per combination of filter values, so `total` without a search sums a few counters.
 * Triggers keep all of this in step with `media` in the same transaction, so it is always exact
 * (created_at, which ord derives from, never changes once a row is written).
 */
const MEDIA_FIND_V3 = `
DROP TRIGGER IF EXISTS media_fts_insert;
DROP TRIGGER IF EXISTS media_fts_delete;
DROP TABLE IF EXISTS media_fts;
DROP INDEX IF EXISTS media_listing;
DROP INDEX IF EXISTS media_public_created;

ALTER TABLE media ADD COLUMN ord INTEGER;
CREATE UNIQUE INDEX media_ord ON media(ord);

-- One token per (field, value): three private-use characters spelling the id in base 6,400.
CREATE TABLE media_terms (
  id INTEGER PRIMARY KEY,
  field TEXT NOT NULL,
  value TEXT NOT NULL,
  token TEXT GENERATED ALWAYS AS (char(57344 + (id / 40960000) % 6400, 57344 + (id / 6400) % 6400, 57344 + id % 6400)) VIRTUAL,
  UNIQUE (field, value)
);
CREATE VIRTUAL TABLE media_find USING fts5(
  prompt, vis, owner, kind, size, model, version, provider,
  content = '', contentless_delete = 1, tokenize = 'trigram'
);
CREATE VIRTUAL TABLE media_grams USING fts5(
  grams, vis, owner, kind, size, model, version, provider,
  content = '', contentless_delete = 1, tokenize = 'trigram', detail = none
);
-- Character positions for building grams inside a trigger (which cannot use a recursive WITH):
-- prompts are at most 1,000 characters (CONTENT_LIMITS); this covers ten times that.
CREATE TABLE media_positions (n INTEGER PRIMARY KEY);
INSERT INTO media_positions (n) WITH RECURSIVE p(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p WHERE n < 10000) SELECT n FROM p;
CREATE TABLE media_counts (
  user_id TEXT NOT NULL, public INTEGER NOT NULL, kind TEXT NOT NULL, size TEXT NOT NULL, model TEXT NOT NULL,
  model_version TEXT NOT NULL, provider_id TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (user_id, public, kind, size, model, model_version, provider_id)
) WITHOUT ROWID;
CREATE TABLE media_public_counts (
  kind TEXT NOT NULL, size TEXT NOT NULL, model TEXT NOT NULL, model_version TEXT NOT NULL, provider_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (kind, size, model, model_version, provider_id)
) WITHOUT ROWID;
-- Bumped on every change to media's listed rows: cached search totals are valid for one version.
CREATE TABLE media_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
INSERT INTO media_version (id, version) VALUES (1, 0);

CREATE TRIGGER media_ord_insert AFTER INSERT ON media WHEN new.ord IS NULL BEGIN
  SELECT RAISE(ABORT, 'more than 1024 media items created in one millisecond')
    WHERE (SELECT max(ord) FROM media WHERE ord BETWEEN new.created_at * 1024 AND new.created_at * 1024 + 1023) = new.created_at * 1024 + 1023;
  UPDATE media SET ord = coalesce(
      (SELECT max(ord) + 1 FROM media WHERE ord BETWEEN new.created_at * 1024 AND new.created_at * 1024 + 1023),
      new.created_at * 1024)
    WHERE seq = new.seq;
END;
CREATE TRIGGER media_find_insert AFTER UPDATE OF ord ON media WHEN old.ord IS NULL BEGIN
${indexRow('new')}
END;
CREATE TRIGGER media_find_update AFTER UPDATE OF user_id, public, kind, size, model, model_version, provider_id, prompt ON media
WHEN old.ord IS NOT NULL BEGIN
${unindexRow('old')}
${indexRow('new')}
END;
CREATE TRIGGER media_find_delete AFTER DELETE ON media WHEN old.ord IS NOT NULL BEGIN
${unindexRow('old')}
END;

-- The rows already here: setting their ord indexes them (media_find_insert).
UPDATE media SET ord = ranked.ord
  FROM (SELECT seq, created_at * 1024 + row_number() OVER (PARTITION BY created_at ORDER BY seq) - 1 AS ord FROM media) AS ranked
  WHERE ranked.seq = media.seq;
`;

// indexRow and unindexRow are part of version 3 and never change: a later need is a new version
// that drops and recreates the triggers.

/** Trigger body: adds row `r` to media_find, media_grams and the counters. */
function indexRow(r: 'new'): string {
  const term = (field: string, value: string) =>
    `(SELECT token FROM media_terms WHERE field = '${field}' AND value = ${value})`;
  const tags = `CASE WHEN ${r}.public = 1 THEN ${term('vis', "'public'")} ELSE '' END,
    ${term('owner', `${r}.user_id`)}, ${term('kind', `${r}.kind`)}, ${term('size', `${r}.size`)},
    ${term('model', `${r}.model`)}, ${term('version', `${r}.model || ':' || ${r}.model_version`)},
    ${term('provider', `${r}.provider_id`)}`;
  return `
  INSERT OR IGNORE INTO media_terms (field, value) VALUES
    ('vis', 'public'), ('owner', ${r}.user_id), ('kind', ${r}.kind), ('size', ${r}.size), ('model', ${r}.model),
    ('version', ${r}.model || ':' || ${r}.model_version), ('provider', ${r}.provider_id);
  INSERT INTO media_find (rowid, prompt, vis, owner, kind, size, model, version, provider) VALUES (
    ${r}.ord, ${r}.prompt, ${tags});
  INSERT INTO media_grams (rowid, grams, vis, owner, kind, size, model, version, provider) VALUES (
    ${r}.ord,
    coalesce((SELECT group_concat(gram, '') FROM (
      SELECT substr(${r}.prompt, n, 1) || char(65535, 65535) AS gram FROM media_positions WHERE n <= length(${r}.prompt)
      UNION SELECT substr(${r}.prompt, n, 2) || char(65535) FROM media_positions WHERE n < length(${r}.prompt))), ''),
    ${tags});
  INSERT INTO media_counts (user_id, public, kind, size, model, model_version, provider_id, n)
    VALUES (${r}.user_id, ${r}.public, ${r}.kind, ${r}.size, ${r}.model, ${r}.model_version, ${r}.provider_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT INTO media_public_counts (kind, size, model, model_version, provider_id, n)
    SELECT ${r}.kind, ${r}.size, ${r}.model, ${r}.model_version, ${r}.provider_id, 1 WHERE ${r}.public = 1
    ON CONFLICT DO UPDATE SET n = n + 1;
  UPDATE media_version SET version = version + 1;`;
}

/** Trigger body: removes row `r` from media_find, media_grams and the counters. */
function unindexRow(r: 'old'): string {
  const key = `user_id = ${r}.user_id AND public = ${r}.public AND kind = ${r}.kind AND size = ${r}.size AND model = ${r}.model
    AND model_version = ${r}.model_version AND provider_id = ${r}.provider_id`;
  const publicKey = `kind = ${r}.kind AND size = ${r}.size AND model = ${r}.model AND model_version = ${r}.model_version
    AND provider_id = ${r}.provider_id AND ${r}.public = 1`;
  return `
  DELETE FROM media_find WHERE rowid = ${r}.ord;
  DELETE FROM media_grams WHERE rowid = ${r}.ord;
  UPDATE media_counts SET n = n - 1 WHERE ${key};
  DELETE FROM media_counts WHERE ${key} AND n <= 0;
  UPDATE media_public_counts SET n = n - 1 WHERE ${publicKey};
  DELETE FROM media_public_counts WHERE ${publicKey} AND n <= 0;
  UPDATE media_version SET version = version + 1;`;
}

/**
 * Version 4: remote provider jobs in flight (docs/providers.md). A row is written as soon as the provider
 * has accepted the job (before any wait) and removed in the transaction that commits the items, or
 * when the job has failed; on start the service resumes every row left (poll, download, pipeline,
 * commit), so a restart neither submits again nor charges twice. `plan` is the JSON of what the
 * commit needs (server/storage/provider-jobs.ts); `job` is the adapter's SubmittedJob. No key.
 */
const PROVIDER_JOBS_V4 = `
CREATE TABLE provider_jobs (
  id TEXT PRIMARY KEY,
  provider_id TEXT NOT NULL,
  provider_job_id TEXT NOT NULL,
  job TEXT NOT NULL,
  plan TEXT NOT NULL,
  user_id TEXT NOT NULL,
  idempotency_key TEXT,
  idempotency_fingerprint TEXT,
  status TEXT NOT NULL,
  submitted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
`;

/**
 * Asynchronous generations (docs/workflows.md). `request` is the validated request body: a generation that
 * was queued or running when the service stopped is planned again from it on start (a remote job
 * resumes through its provider_jobs row, which names the generation). `result` is the synchronous
 * answer's body, written in the transaction that commits the items and their charge.
 */
const GENERATIONS_V5 = `
CREATE TABLE generations (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  operation TEXT NOT NULL,
  status TEXT NOT NULL,
  request TEXT NOT NULL,
  idempotency_key TEXT,
  idempotency_fingerprint TEXT,
  webhook_url TEXT,
  queue_position INTEGER,
  progress REAL,
  result TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX generations_user ON generations(user_id, created_at);
CREATE INDEX generations_open ON generations(status) WHERE status NOT IN ('succeeded', 'failed', 'canceled');
CREATE UNIQUE INDEX generations_idempotency ON generations(user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
ALTER TABLE provider_jobs ADD COLUMN generation_id TEXT;
ALTER TABLE media ADD COLUMN variation_of TEXT;
`;

/**
 * Version 6: outgoing webhooks (docs/workflows.md). `api_keys.webhook_secret` is the key's Standard Webhooks
 * signing secret, sealed with a key derived from the data directory's secret.key
 * (server/webhooks/secrets.ts), so the database alone never reveals it; NULL for keys made before
 * this version until first use or `keys rotate-webhook-secret`. A `webhook_deliveries` row is one
 * event for one target; its id is the `webhook-id` header, the same on every retry. `payload` is
 * the exact JSON body (signed anew on each attempt, since the signature covers the timestamp).
 * `next_attempt_at` is NULL once delivered or failed.
 */
const WEBHOOKS_V6 = `
ALTER TABLE api_keys ADD COLUMN webhook_secret TEXT;
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  generation_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  url TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  last_status INTEGER,
  last_error TEXT,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_key ON webhook_deliveries(key_id, created_at);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
`;

/** Version 2's rows as version 7's (the same statement in the PostgreSQL schema-v3.sql). */
const RATE_WINDOWS_INTO_COUNTERS = `
INSERT INTO rate_counters (user_id, minute_start, minute_count, hour_start, hour_count, day_start, day_count)
SELECT user_id,
  coalesce(max(CASE WHEN "window" = 'minute' THEN start END), 0), coalesce(max(CASE WHEN "window" = 'minute' THEN count END), 0),
  coalesce(max(CASE WHEN "window" = 'hour' THEN start END), 0), coalesce(max(CASE WHEN "window" = 'hour' THEN count END), 0),
  coalesce(max(CASE WHEN "window" = 'day' THEN start END), 0), coalesce(max(CASE WHEN "window" = 'day' THEN count END), 0)
FROM rate_windows GROUP BY user_id;`;

/**
 * Version 7: rate windows counted in the database, one row per account (docs/service.md). A counted
 * request is one atomic upsert that increments all three windows only if none is full
 * (server/limits/rate-limiter.ts), so the limits hold across nodes and restarts. The rows of
 * version 2's rate_windows move here.
 */
const RATE_COUNTERS_V7 = `
CREATE TABLE rate_counters (
  user_id TEXT PRIMARY KEY,
  minute_start INTEGER NOT NULL,
  minute_count INTEGER NOT NULL,
  hour_start INTEGER NOT NULL,
  hour_count INTEGER NOT NULL,
  day_start INTEGER NOT NULL,
  day_count INTEGER NOT NULL
) WITHOUT ROWID;
${RATE_WINDOWS_INTO_COUNTERS}
DROP TABLE rate_windows;
`;

/**
 * Version 8: concurrent generations counted in the database (docs/service.md): one row per running
 * generation, with a lease its node renews (server/limits/concurrency.ts), so the limits hold across
 * nodes and a node that dies frees its slots when their leases lapse.
 */
const RUNNING_SLOTS_V8 = `
CREATE TABLE running_slots (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  node TEXT NOT NULL,
  lease_until INTEGER NOT NULL
);
CREATE INDEX running_slots_user ON running_slots(user_id, kind);
CREATE INDEX running_slots_node ON running_slots(node);
`;

/**
 * Version 9 (docs/service.md): what several nodes must agree on beyond counters.
 * - storage_reservations: the bytes a running generation may still store, one row per generation
 *   with a lease its node renews (server/limits/storage-quota.ts), so the storage quota counts
 *   every node's running generations and a dead node's reservations lapse.
 * - leases: named work that one node at a time does (the retention sweep, server/storage/leases.ts).
 */
const RESERVATIONS_V9 = `
CREATE TABLE storage_reservations (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  node TEXT NOT NULL,
  lease_until INTEGER NOT NULL
);
CREATE INDEX storage_reservations_user ON storage_reservations(user_id);
CREATE INDEX storage_reservations_node ON storage_reservations(node);
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  lease_until INTEGER NOT NULL
);
`;

/**
 * Version 10: finished generations found by when they ended, so that retention
 * (server/retention/sweeper.ts) removes those past their keep without reading every generation.
 * Partial: open ones are not in it.
 */
const FINISHED_GENERATIONS_V10 = `
CREATE INDEX generations_finished ON generations(updated_at) WHERE status IN ('succeeded', 'failed', 'canceled');
`;

/**
 * Version 11: which generations a synchronous request made. On PostgreSQL those are queue jobs
 * too (server/generation/sync-generation.ts), and GET /v1/generations lists the asynchronous ones
 * only, as on SQLite, where a synchronous request stores no row. The same column on both, so
 * that export and import move it.
 */
const SYNCHRONOUS_GENERATIONS_V11 = `
ALTER TABLE generations ADD COLUMN synchronous INTEGER NOT NULL DEFAULT 0;
`;

/**
 * Version 12: the key of an upload's received bytes. Every PUT stores its body under a key of its
 * own (server/storage/layout.ts, uploadPutKey), and marking the upload received records the key of
 * the one kept, so two PUTs whose bodies both reach the store never replace each other's. Rows
 * received before keep NULL: their bytes are where every PUT stored them then, uploads/<id>/data.
 */
const UPLOAD_RECEIVED_KEY_V12 = `
ALTER TABLE uploads ADD COLUMN received_key TEXT;
`;

/**
 * Version 13: a rotated-out webhook signing secret, kept sealed beside the new one until
 * `previous_webhook_secret_until` (server/webhooks/secrets.ts): deliveries carry a signature by
 * each until then, so receivers switch secrets without a delivery failing to verify.
 */
const PREVIOUS_WEBHOOK_SECRET_V13 = `
ALTER TABLE api_keys ADD COLUMN previous_webhook_secret TEXT;
ALTER TABLE api_keys ADD COLUMN previous_webhook_secret_until INTEGER;
`;

/**
 * Version 14: each generation's plan (GenerationPlan, shared/api): the request validated and
 * routed when it came in, which a restart and a node taking the generation over run from. Rows
 * stored before keep NULL: those are planned again from `request`, as they always were.
 */
const GENERATION_PLAN_V14 = `
ALTER TABLE generations ADD COLUMN plan TEXT;
`;

/** The service database's schema, step by step (shared/node/migrations.ts). Append only. */
export const SERVICE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', up: (db) => db.exec(SCHEMA_V1) },
  { version: 2, name: 'persistent rate windows and per-account limits', up: (db) => db.exec(SCHEMA_V2) },
  { version: 3, name: 'media listing: order key, find index and counters', up: (db) => db.exec(MEDIA_FIND_V3) },
  { version: 4, name: 'remote provider jobs in flight', up: (db) => db.exec(PROVIDER_JOBS_V4) },
  { version: 5, name: 'asynchronous generations and variation lineage', up: (db) => db.exec(GENERATIONS_V5) },
  { version: 6, name: 'webhook signing secrets and deliveries', up: (db) => db.exec(WEBHOOKS_V6) },
  { version: 7, name: 'rate windows counted atomically, one row per account', up: (db) => db.exec(RATE_COUNTERS_V7) },
  { version: 8, name: 'concurrent generations held as leased rows', up: (db) => db.exec(RUNNING_SLOTS_V8) },
  {
    version: 9,
    name: 'storage reservations and node leases held as leased rows',
    up: (db) => db.exec(RESERVATIONS_V9),
  },
  {
    version: 10,
    name: 'finished generations by their end, for retention',
    up: (db) => db.exec(FINISHED_GENERATIONS_V10),
  },
  { version: 11, name: 'generations made by synchronous requests', up: (db) => db.exec(SYNCHRONOUS_GENERATIONS_V11) },
  { version: 12, name: "the key of each upload's received bytes", up: (db) => db.exec(UPLOAD_RECEIVED_KEY_V12) },
  {
    version: 13,
    name: 'rotated webhook secrets sign beside the new one for a day',
    up: (db) => db.exec(PREVIOUS_WEBHOOK_SECRET_V13),
  },
  { version: 14, name: "each generation's plan, which a restart runs from", up: (db) => db.exec(GENERATION_PLAN_V14) },
];

/** The schema version this build writes and needs. */
export const SERVICE_SCHEMA_VERSION = latestVersion(SERVICE_MIGRATIONS);

/** How errors and `migrate` name the database. */
export function describeDatabase(dataDir: string): string {
  return `the service database in ${dataDir}`;
}

/**
 * Opens the service database. By default it is migrated to this build's version first (the
 * embedded engine, `keys`, `users`). `migrate: false` (`serve --no-migrate`) changes nothing and
 * refuses a database at any other version (SchemaOutOfDateError, SchemaTooNewError).
 */
export function openDatabase(dataDir: string, options: { migrate?: boolean } = {}): SqliteSql {
  // WAL (see openSqlite) lets the CLI (keys, tiers) write while a server reads.
  const db = openSqlite(join(dataDir, 'service.db'));
  try {
    if (options.migrate === false) requireCurrentSchema(db, describeDatabase(dataDir), SERVICE_MIGRATIONS);
    else migrate(db, describeDatabase(dataDir), SERVICE_MIGRATIONS);
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteSql(db, describeDatabase(dataDir));
}

/**
 * `clipdesk-service migrate` on SQLite: brings the database to this build's version and returns
 * the steps it applied (none when it already was). Each step runs in an IMMEDIATE transaction
 * with its version bump (shared/node/migrations.ts), so a second process migrating at once waits
 * for the write lock, then finds the step done. `lockWaitMs` bounds that wait: a step over a
 * large database (version 3 indexes 100,000 items in about 15 s) outlasts the usual 5 s.
 */
export function migrateDatabase(dataDir: string, lockWaitMs = 300_000): { applied: Migration[]; version: number } {
  const db = openSqlite(join(dataDir, 'service.db'));
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(lockWaitMs))}`);
    const versions = new Set(migrate(db, describeDatabase(dataDir), SERVICE_MIGRATIONS));
    return { applied: SERVICE_MIGRATIONS.filter((m) => versions.has(m.version)), version: schemaVersion(db) };
  } finally {
    db.close();
  }
}

/** Where the service keeps its rows: the data directory's SQLite file, or a PostgreSQL database. */
export type DatabaseLocation = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string };

/**
 * Opens the service database where `location` says, migrated to this build's schema first unless
 * `migrate` is false (then a database at another version is refused, unchanged). A PostgreSQL
 * database that cannot be reached is a DatabaseUnreachableError naming it (never its password).
 */
export async function openServiceDatabase(
  location: DatabaseLocation,
  options: { migrate?: boolean } = {},
): Promise<SqlDatabase> {
  if (location.kind === 'sqlite') return openDatabase(location.dataDir, options);
  // Loaded only for PostgreSQL: the embedded engine starts without the driver.
  const { DatabaseUnreachableError, describePostgres, migratePostgres, reason, requirePostgresSchema } =
    await import('./pg/migrate.ts');
  const { PostgresSql } = await import('./sql/postgres.ts');
  const { url } = location;
  const what = describePostgres(url);
  if (options.migrate !== false) await migratePostgres(url);
  const db = new PostgresSql(url, what);
  try {
    try {
      await db.get('SELECT 1');
    } catch (error) {
      throw new DatabaseUnreachableError(`cannot reach ${what}: ${reason(error, url)}`);
    }
    await db.checkStatementPooler();
    await requirePostgresSchema(db, what);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
