import type { Migration } from '../../shared/node/migrations.ts';
import { latestVersion } from '../../shared/node/migrations.ts';
import { MEDIA_FIND_V3 } from './sqlite-media-find-v3.ts';

// The SQLite service database's schema, version by version (db.ts opens and migrates with it).
// Existing databases upgrade through this list in order: a step never changes once shipped, and a
// new one is appended (docs/architecture.md, "The service's layers").

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
