import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLibraryStore, openDatabase } from '../../../../../electron/core/library/index.ts';
import { schemaVersion, SchemaTooNewError } from '../../../../../shared/node/migrations.ts';
import type { DatabaseSync } from 'node:sqlite';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'library-schema-'));
  dirs.push(dir);
  return join(dir, 'library.db');
}

// The schema exactly as the library wrote it before it had a version (migrateLibrary of that release).
const OLD_TRIGGERS = `
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
const OLD_SCHEMA = `
    CREATE TABLE IF NOT EXISTS library_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS library_items (
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
      deadline INTEGER,
      downloaded_path TEXT,
      downloaded_at INTEGER,
      favourite INTEGER NOT NULL DEFAULT 0,
      lost_at INTEGER,
      warned_at INTEGER,
      seen_mark INTEGER NOT NULL,
      data TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS library_items_media ON library_items (media, rowid);
    CREATE INDEX IF NOT EXISTS library_items_deadline ON library_items (deadline) WHERE lost_at IS NULL;
    CREATE INDEX IF NOT EXISTS library_items_favourite ON library_items (rowid) WHERE favourite = 1;
    CREATE VIRTUAL TABLE IF NOT EXISTS library_fts USING fts5(
      prompt, content = 'library_items', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
    );
    ${OLD_TRIGGERS}
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
    INSERT OR IGNORE INTO library_meta (key, value) VALUES ('schema_version', '1');
`;
const T = Date.UTC(2026, 0, 5);

function oldLibrary(path: string, deferred = false): DatabaseSync {
  const db = openDatabase(path);
  db.exec(OLD_SCHEMA);
  if (deferred) {
    db.exec('DROP TRIGGER library_items_ai; DROP TRIGGER library_items_ad; DROP TRIGGER library_items_au;');
    db.exec("INSERT INTO library_meta (key, value) VALUES ('search_index_deferred', '1')");
  }
  const insert = db.prepare(
    `INSERT INTO library_items (rowid, id, user, media, model, model_slug, provider, provider_name, prompt, size, created_at, deadline, seen_mark, data)
     VALUES (?, ?, 'u1', 'video', 'clipdesk/motion', 'clipdesk/motion:1.1', 'local-swift', 'Local Swift', ?, '360p', ?, NULL, 0, ?)`,
  );
  for (const [i, prompt] of ['red fox at dawn', 'blue whale', 'red sunset'].entries()) {
    const data = JSON.stringify({ url: `http://x/m${i}.mp4`, mime: 'video/mp4', model: 'clipdesk/motion' });
    insert.run((T + i) * 1000, `m${i}`, prompt, T + i, data);
  }
  db.exec("INSERT INTO library_collections (id, name, created_at) VALUES ('c1', 'Picks', 1)");
  db.exec("INSERT INTO library_collection_items (collection_id, item_id, added_at) VALUES ('c1', 'm0', 2)");
  return db;
}

const schemaOf = (db: DatabaseSync) =>
  db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();

function open(db: DatabaseSync) {
  return createLibraryStore({ db, now: () => T + 10, retentionDays: () => 7 });
}

describe('library index schema versions', () => {
  it('a library written before versions is adopted as version 1 and migrated to 3, with its items, search and collections', () => {
    const db = oldLibrary(dbPath());
    const before = schemaOf(db);
    const store = open(db);
    expect(schemaVersion(db)).toBe(3);
    // Version 1 adopts the old schema as it is; version 2 only adds the shot-chain tables, 3 an index.
    const after = schemaOf(db) as { name: string }[];
    const indexes = ['library_items_media_size', 'library_items_lost'];
    expect(after.filter((t) => !t.name.startsWith('library_shot') && !indexes.includes(t.name))).toEqual(before);
    expect(after.map((t) => t.name)).toEqual(expect.arrayContaining(indexes));
    expect(after.map((t) => t.name).filter((n) => n.startsWith('library_shot'))).toEqual([
      'library_shot_jobs',
      'library_shots',
    ]);
    expect(store.count()).toBe(3);
    expect(store.query({ search: 'red' }).items.map((i) => i.item.id)).toEqual(['m2', 'm0']);
    expect(store.collections()).toMatchObject([{ id: 'c1', name: 'Picks', size: 1 }]);
    // Reopening applies nothing more.
    open(db);
    expect(schemaVersion(db)).toBe(3);
    db.close();
  });

  it('a library left mid-way through a deferred first sync gets its search index built on open', () => {
    const db = oldLibrary(dbPath(), true);
    const store = open(db);
    expect(store.query({ search: 'whale' }).items.map((i) => i.item.id)).toEqual(['m1']);
    expect(store.getMeta('search_index_deferred')).toBeNull();
    db.close();
  });

  it('a library written by a newer version is refused with a clear error, untouched', () => {
    const db = oldLibrary(dbPath());
    db.exec('PRAGMA user_version = 7');
    const before = schemaOf(db);
    expect(() => open(db)).toThrow(SchemaTooNewError);
    expect(() => open(db)).toThrow(/the library index has schema version 7, newer than the 3 this program knows/);
    expect(schemaOf(db)).toEqual(before);
    db.close();
  });
});
