import type { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import type { Migration } from '../../shared/node/migrations.ts';
import { migrate } from '../../shared/node/migrations.ts';
import { openSqlite } from '../../shared/node/sqlite.ts';

export { transaction } from '../../shared/node/sqlite.ts';

/**
 * The service's one SQLite database (node:sqlite, WAL). Files live beside it on disk; a media row
 * is only inserted after its files are in place, so a row always points at complete files.
 */
export type Db = DatabaseSync;

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

/** The service database's schema, step by step (shared/node/migrations.ts). Append only. */
export const SERVICE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial schema', up: (db) => db.exec(SCHEMA_V1) },
  { version: 2, name: 'persistent rate windows and per-account limits', up: (db) => db.exec(SCHEMA_V2) },
];

export function openDatabase(dataDir: string): Db {
  // WAL (see openSqlite) lets the CLI (keys, tiers) write while a server reads.
  const db = openSqlite(join(dataDir, 'service.db'));
  migrate(db, `the service database in ${dataDir}`, SERVICE_MIGRATIONS);
  return db;
}

type Statement = ReturnType<Db['prepare']>;
const statementCache = new WeakMap<Db, Map<string, Statement>>();

/** A prepared statement, compiled once per database: hot paths (auth, /media) run these per request. */
export function sql(db: Db, text: string): Statement {
  let cache = statementCache.get(db);
  if (!cache) {
    cache = new Map();
    statementCache.set(db, cache);
  }
  let statement = cache.get(text);
  if (!statement) {
    statement = db.prepare(text);
    cache.set(text, statement);
  }
  return statement;
}
