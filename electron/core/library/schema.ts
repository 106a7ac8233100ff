import type { DatabaseSync } from 'node:sqlite';
import type { Migration } from '../../../shared/node/migrations.ts';
import { migrate } from '../../../shared/node/migrations.ts';
import { transaction } from './db.ts';

/** Set while a first full sync writes rows without the FTS triggers (see deferSearchIndex). */
export const SEARCH_INDEX_DEFERRED = 'search_index_deferred';

// Keep the external-content FTS index in step with library_items, row by row.
const FTS_TRIGGERS = `
    CREATE TRIGGER IF NOT EXISTS library_items_ai AFTER INSERT ON library_items BEGIN
      INSERT INTO library_fts (rowid, prompt) VALUES (new.rowid, new.prompt);
    END;
    CREATE TRIGGER IF NOT EXISTS library_items_ad AFTER DELETE ON library_items BEGIN
      INSERT INTO library_fts (library_fts, rowid, prompt) VALUES ('delete', old.rowid, old.prompt);
    END;
    CREATE TRIGGER IF NOT EXISTS library_items_au AFTER UPDATE OF prompt ON library_items WHEN old.prompt IS NOT new.prompt BEGIN
      INSERT INTO library_fts (library_fts, rowid, prompt) VALUES ('delete', old.rowid, old.prompt);
      INSERT INTO library_fts (rowid, prompt) VALUES (new.rowid, new.prompt);
    END;`;

/**
 * Stops per-row FTS upkeep. All three triggers go, not only the insert one: an external-content
 * FTS5 'delete' of a row the index never saw corrupts it. Call inside a transaction that also
 * sets SEARCH_INDEX_DEFERRED, so a crash before rebuildSearchIndex is repaired on the next open.
 */
export function dropFtsTriggers(db: DatabaseSync): void {
  db.exec(
    'DROP TRIGGER IF EXISTS library_items_ai; DROP TRIGGER IF EXISTS library_items_ad; DROP TRIGGER IF EXISTS library_items_au;',
  );
}

/** Builds the FTS index from library_items in one pass and restores per-row upkeep. Call inside a transaction. */
export function rebuildSearchIndex(db: DatabaseSync): void {
  db.exec(`INSERT INTO library_fts (library_fts) VALUES ('rebuild'); ${FTS_TRIGGERS}`);
  db.prepare('DELETE FROM library_meta WHERE key = ?').run(SEARCH_INDEX_DEFERRED);
}

// Version 1 is the schema the library shipped without a version; its IF NOT EXISTS clauses make
// it adopt such a database as it is. The `schema_version` row is what that release wrote.
const SCHEMA_V1 = `
  CREATE TABLE IF NOT EXISTS library_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS library_items (
    -- createdAt (ms) × 1000 + a tie-breaker: rowid order is time order, so FTS5 can stream
    -- matches newest first (ORDER BY rowid) and a page stops early instead of sorting them all.
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user TEXT NOT NULL,
    media TEXT NOT NULL,
    model TEXT NOT NULL,
    model_slug TEXT NOT NULL,
    provider TEXT NOT NULL,
    provider_name TEXT NOT NULL,
    prompt TEXT NOT NULL,
    size TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    -- Retention deadline: the service's expiresAt, else createdAt + the tier's retention;
    -- NULL when the service says the item is exempt.
    deadline INTEGER,
    downloaded_path TEXT,
    downloaded_at INTEGER,
    favourite INTEGER NOT NULL DEFAULT 0,
    lost_at INTEGER,
    warned_at INTEGER,
    -- The reconcile run that last saw it on the service (see markUnseenLost).
    seen_mark INTEGER NOT NULL,
    data TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS library_items_media ON library_items (media, rowid);
  CREATE INDEX IF NOT EXISTS library_items_deadline ON library_items (deadline) WHERE lost_at IS NULL;
  CREATE INDEX IF NOT EXISTS library_items_favourite ON library_items (rowid) WHERE favourite = 1;
  CREATE VIRTUAL TABLE IF NOT EXISTS library_fts USING fts5(
    prompt, content = 'library_items', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
  );
  ${FTS_TRIGGERS}
  CREATE TABLE IF NOT EXISTS library_collections (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS library_collection_items (
    collection_id TEXT NOT NULL REFERENCES library_collections (id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    added_at INTEGER NOT NULL,
    PRIMARY KEY (collection_id, item_id)
  );
  CREATE INDEX IF NOT EXISTS library_collection_items_item ON library_collection_items (item_id);
`;

// docs/workflows.md, shot chains. A shot's lineage is local knowledge (the service has no notion of it), so
// it lives beside library_items, keyed by item id, and is also written into the item's sidecar so
// that a library rebuilt from sidecars keeps its chains (chains.ts). A chain's id is its first
// shot's item id; positions count from 1. `library_shot_jobs` remembers, from submit until the
// result is downloaded, which item a queued job continues (the job journal stays as it is).
const SCHEMA_V2_SHOTS = `
  CREATE TABLE library_shots (
    item_id TEXT PRIMARY KEY,
    chain_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    parent_id TEXT,
    -- SHA-256 (hex) of the start frame bytes that were uploaded; NULL for a chain's first shot or when unknown.
    source_sha256 TEXT,
    -- The start frame as a reference that outlives the run (clipdesk-media:<id> or the URL given).
    source_image TEXT,
    -- In and out points (seconds) when the shot is used trimmed in its chain; both NULL otherwise.
    trim_start REAL,
    trim_end REAL,
    created_at INTEGER NOT NULL,
    UNIQUE (chain_id, position)
  );
  CREATE TABLE library_shot_jobs (
    job_id TEXT PRIMARY KEY,
    parent_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
`;

/** The library index's schema, step by step (shared/node/migrations.ts). Append only. */
const LIBRARY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    up: (db) => {
      db.exec(SCHEMA_V1);
      db.prepare('INSERT OR IGNORE INTO library_meta (key, value) VALUES (?, ?)').run('schema_version', '1');
    },
  },
  {
    version: 2,
    name: 'shot chains (lineage)',
    up: (db) => db.exec(SCHEMA_V2_SHOTS),
  },
  {
    version: 3,
    // The queue under load (docs/benchmarks.md): a kind + size filter that matches little or nothing (images at 720p) walked
    // every item of the kind, ~10 ms on 30,000 items, and its count read every matching row (15 ms),
    // blocking main's event loop while the queue works. The index ends in rowid (implicitly), so a
    // page still comes in time order, and a count reads the index alone.
    name: 'kind and size filter index',
    // lost_at is in it too, since the page asks for live items by default; and lost items get a
    // partial index of their own, so a search's count can take them off the full-text count.
    up: (db) =>
      db.exec(`
        CREATE INDEX IF NOT EXISTS library_items_media_size ON library_items (media, size, favourite, lost_at);
        CREATE INDEX IF NOT EXISTS library_items_lost ON library_items (lost_at) WHERE lost_at IS NOT NULL;
      `),
  },
];

/** The local index of the account's media. Times are epoch milliseconds. */
export function migrateLibrary(db: DatabaseSync): void {
  migrate(db, 'the library index', LIBRARY_MIGRATIONS);
  // A first sync died between deferring and building the search index: build it now.
  if (db.prepare('SELECT 1 FROM library_meta WHERE key = ?').get(SEARCH_INDEX_DEFERRED)) {
    transaction(db, () => rebuildSearchIndex(db));
  }
}
