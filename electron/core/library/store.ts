import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { MediaItem } from '../../../shared/api/index.ts';
import { createShotChains } from './chains.ts';
import { transaction } from './db.ts';
import { retentionDeadline } from './deadline.ts';
import { buildLibraryQuery, encodeCursor } from './query.ts';
import type { LibraryQuery } from './query.ts';
import { dropFtsTriggers, migrateLibrary, rebuildSearchIndex, SEARCH_INDEX_DEFERRED } from './schema.ts';

/** A media item as the library knows it: the service's fields plus local state. */
export interface LibraryItem {
  item: MediaItem;
  /** Epoch ms when retention deletes it on the service; null when exempt. */
  deadline: number | null;
  downloadedPath: string | null;
  downloadedAt: number | null;
  favourite: boolean;
  /** Epoch ms when a sync found it deleted on the service; null while it is there. */
  lostAt: number | null;
  warnedAt: number | null;
}

export interface LibraryPage {
  items: LibraryItem[];
  nextCursor: string | null;
}

export interface Collection {
  id: string;
  name: string;
  createdAt: number;
  size: number;
}

export interface UpsertResult {
  inserted: number;
  /** Items already in the index whose service fields changed (or that came back after being marked lost). */
  updated: number;
  /** Ids that were already in the index before this upsert. */
  known: Set<string>;
}

interface Row {
  rowid: number;
  id: string;
  user: string;
  media: string;
  prompt: string;
  /** The item's JSON without the fields stored verbatim in columns (see storedData). */
  data: string;
  deadline: number | null;
  downloaded_path: string | null;
  downloaded_at: number | null;
  favourite: number;
  lost_at: number | null;
  warned_at: number | null;
  created_at: number;
}

/**
 * The item as stored in `data`: without the fields that have verbatim columns, so the prompt (the
 * largest field) is not written twice. Rows written before this still hold them; the columns win.
 */
function storedData(item: MediaItem): string {
  // JSON leaves out undefined properties; this is faster than a rest-destructured copy.
  return JSON.stringify({ ...item, id: undefined, user: undefined, media: undefined, prompt: undefined });
}

function toLibraryItem(row: Row): LibraryItem {
  return {
    item: { ...(JSON.parse(row.data) as MediaItem), id: row.id, user: row.user, media: row.media, prompt: row.prompt },
    deadline: row.deadline,
    downloadedPath: row.downloaded_path,
    downloadedAt: row.downloaded_at,
    favourite: row.favourite === 1,
    lostAt: row.lost_at,
    warnedAt: row.warned_at,
  };
}

/**
 * WAL pages (4 KiB each by default) between automatic checkpoints during a first sync's bulk load,
 * instead of SQLite's 1,000. Each checkpoint waits for two fsyncs and copies every page changed
 * since the last one; at the usual interval a 10,000-item load ran three of them and spent half its
 * write time there, rewriting the id index's pages each time. The WAL grows to about 16 MiB at most.
 */
const BULK_WAL_AUTOCHECKPOINT = 4096;

export interface LibraryStoreOptions {
  db: DatabaseSync;
  now: () => number;
  /** The account tier's retention in days, for items the service sends without expiresAt. */
  retentionDays: () => number;
}

export type LibraryStore = ReturnType<typeof createLibraryStore>;

// An upsert in three steps, so that each row says whether it was new, changed or only seen:
// insert if new; else update if anything the service sent differs; else only stamp the mark.
// All take the same parameters. created_at is not compared: it derives from data, or from now()
// when createdAt does not parse, which must not count as a change on every pass.
const INSERT_SQL = `
  INSERT INTO library_items (rowid, id, user, media, model, model_slug, provider, provider_name, prompt, size, created_at, deadline, seen_mark, data)
  VALUES ((SELECT coalesce(max(rowid) + 1, ?1 * 1000) FROM library_items WHERE rowid BETWEEN ?1 * 1000 AND ?1 * 1000 + 999),
    ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?1, ?11, ?12, ?13)
  ON CONFLICT (id) DO NOTHING`;
const UPDATE_SQL = `
  UPDATE library_items SET
    user = ?3, media = ?4, model = ?5, model_slug = ?6, provider = ?7, provider_name = ?8, prompt = ?9, size = ?10,
    created_at = ?1, deadline = ?11, seen_mark = ?12, data = ?13, lost_at = NULL
  WHERE id = ?2 AND (data IS NOT ?13 OR prompt IS NOT ?9 OR user IS NOT ?3 OR media IS NOT ?4 OR deadline IS NOT ?11 OR lost_at IS NOT NULL)`;
const STAMP_SQL = 'UPDATE library_items SET seen_mark = ?2 WHERE id = ?1';

type Statement = (sql: string) => StatementSync;

/** Writes items in one transaction, stamping `seen` on each (see INSERT_SQL for the three steps). */
function upsertItems(
  ctx: { db: DatabaseSync; stmt: Statement; now: () => number; days: number },
  items: readonly MediaItem[],
  seen: number,
): UpsertResult {
  const { db, stmt, now, days } = ctx;
  const known = new Set<string>();
  let inserted = 0;
  let updated = 0;
  const insert = stmt(INSERT_SQL);
  transaction(db, () => {
    // Oldest first, so rows go in rowid (time) order: the B-tree then fills its pages, where
    // newest-first inserts leave every page half empty (twice the file, and twice the WAL).
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i]!;
      const parsed = Date.parse(item.createdAt);
      const created = Number.isFinite(parsed) && parsed > 0 ? parsed : now();
      const params = [
        created,
        item.id,
        item.user,
        item.media,
        item.model.toLowerCase(),
        (item.modelSlug ?? item.model).toLowerCase(),
        item.provider.toLowerCase(),
        item.providerName ?? item.provider,
        item.prompt,
        item.size.toLowerCase(),
        retentionDeadline(item, days),
        seen,
        storedData(item),
      ] as const;
      if (Number(insert.run(...params).changes) > 0) {
        inserted++;
        continue;
      }
      known.add(item.id);
      if (Number(stmt(UPDATE_SQL).run(...params).changes) > 0) updated++;
      else stmt(STAMP_SQL).run(item.id, seen);
    }
  });
  return { inserted, updated, known };
}

/** A first full sync's bulk load: the search index built once at its end, the WAL checkpointed less often. */
function searchIndexLoad(db: DatabaseSync, stmt: Statement, getMeta: (key: string) => string | null) {
  // The connection's WAL checkpoint interval while a first sync bulk-loads; null otherwise.
  let usualAutocheckpoint: number | null = null;
  return {
    /**
     * For a first full sync: rows are written without per-row FTS upkeep (most of a cold sync's
     * write time), and buildSearchIndex indexes them all at once. Until then a search does not
     * see them. Durable: if the app dies in between, the next open builds the index.
     * Until buildSearchIndex the WAL is also checkpointed less often (see BULK_WAL_AUTOCHECKPOINT).
     */
    deferSearchIndex(): void {
      if (usualAutocheckpoint === null) {
        usualAutocheckpoint = (db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number })
          .wal_autocheckpoint;
        db.exec(`PRAGMA wal_autocheckpoint = ${Math.max(usualAutocheckpoint, BULK_WAL_AUTOCHECKPOINT)}`);
      }
      if (getMeta(SEARCH_INDEX_DEFERRED) !== null) return;
      transaction(db, () => {
        dropFtsTriggers(db);
        stmt('INSERT INTO library_meta (key, value) VALUES (?, ?)').run(SEARCH_INDEX_DEFERRED, '1');
      });
    },

    /**
     * Indexes every row for search in one pass and restores per-row FTS upkeep (no-op unless
     * deferred); after a deferred load, also checkpoints the WAL once and restores its interval.
     */
    buildSearchIndex(): void {
      if (getMeta(SEARCH_INDEX_DEFERRED) !== null) transaction(db, () => rebuildSearchIndex(db));
      if (usualAutocheckpoint !== null) {
        db.exec(`PRAGMA wal_autocheckpoint = ${usualAutocheckpoint}`);
        usualAutocheckpoint = null;
        // PASSIVE never waits for readers; what it cannot copy now, a later checkpoint does.
        db.exec('PRAGMA wal_checkpoint(PASSIVE)');
      }
    },
  };
}

/** The local index: writes from sync and the guard, offline reads for the UI. */
export function createLibraryStore({ db, now, retentionDays }: LibraryStoreOptions) {
  migrateLibrary(db);
  const statements = new Map<string, StatementSync>();
  const stmt = (sql: string): StatementSync => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  };
  const getMeta = (key: string): string | null =>
    (stmt('SELECT value FROM library_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value ?? null;
  const seenMark = (): number => Number(getMeta('seen_mark') ?? '0');

  return {
    db,
    /** Shot chains: lineage of items made with "Continue this shot" (chains.ts). */
    chains: createShotChains(db, now),
    /** The mark of the current reconcile run; upserts stamp it on the items they see. */
    seenMark,

    /**
     * Writes items listed newest first (as `/media` pages are) in one transaction, stamping `mark`
     * (default: the current one).
     */
    upsert: (items: readonly MediaItem[], mark?: number): UpsertResult =>
      upsertItems({ db, stmt, now, days: retentionDays() }, items, mark ?? seenMark()),

    ...searchIndexLoad(db, stmt, getMeta),

    get(id: string): LibraryItem | null {
      const row = stmt('SELECT * FROM library_items WHERE id = ?').get(id) as Row | undefined;
      return row ? toLibraryItem(row) : null;
    },

    query(q: LibraryQuery = {}): LibraryPage {
      const built = buildLibraryQuery(q, now());
      const rows = stmt(built.sql).all(...built.params) as unknown as Row[];
      const page = rows.slice(0, built.limit);
      const last = page.at(-1);
      return {
        items: page.map(toLibraryItem),
        nextCursor: rows.length > built.limit && last ? encodeCursor(last.rowid) : null,
      };
    },

    isEmpty(): boolean {
      return stmt('SELECT 1 FROM library_items LIMIT 1').get() === undefined;
    },

    count(): number {
      return (stmt('SELECT count(*) AS n FROM library_items').get() as { n: number }).n;
    },

    /** Recomputes deadlines without expiresAt, e.g. after the tier became known. */
    recomputeDeadlines(): void {
      const days = retentionDays();
      const rows = stmt('SELECT id, data FROM library_items WHERE lost_at IS NULL').all() as {
        id: string;
        data: string;
      }[];
      const update = stmt('UPDATE library_items SET deadline = ? WHERE id = ?');
      transaction(db, () => {
        for (const r of rows) update.run(retentionDeadline(JSON.parse(r.data) as MediaItem, days), r.id);
      });
    },

    /** After a complete reconcile run: everything it did not see was deleted on the service. */
    markUnseenLost(mark: number): string[] {
      const at = now();
      return transaction(db, () => {
        const rows = stmt('SELECT id FROM library_items WHERE lost_at IS NULL AND seen_mark < ?').all(mark) as {
          id: string;
        }[];
        stmt('UPDATE library_items SET lost_at = ? WHERE lost_at IS NULL AND seen_mark < ?').run(at, mark);
        return rows.map((r) => r.id);
      });
    },

    markLost(id: string): void {
      stmt('UPDATE library_items SET lost_at = ? WHERE id = ? AND lost_at IS NULL').run(now(), id);
    },

    markDownloaded(id: string, path: string): void {
      stmt('UPDATE library_items SET downloaded_path = ?, downloaded_at = ? WHERE id = ?').run(path, now(), id);
    },

    markWarned(id: string): void {
      stmt('UPDATE library_items SET warned_at = ? WHERE id = ?').run(now(), id);
    },

    /** Items not lost and not downloaded whose deadline is at or before `before`, soonest first. */
    dueBefore(before: number, opts: { favouritesOnly?: boolean; limit?: number } = {}): LibraryItem[] {
      const rows = stmt(
        `SELECT * FROM library_items WHERE lost_at IS NULL AND downloaded_path IS NULL AND deadline IS NOT NULL AND deadline <= ?
         ${opts.favouritesOnly ? 'AND favourite = 1' : ''} ORDER BY deadline LIMIT ?`,
      ).all(before, opts.limit ?? 100) as unknown as Row[];
      return rows.map(toLibraryItem);
    },

    setFavourite(id: string, favourite: boolean): boolean {
      return Number(stmt('UPDATE library_items SET favourite = ? WHERE id = ?').run(favourite ? 1 : 0, id).changes) > 0;
    },

    ...collectionCalls(db, stmt, now),

    getMeta,

    setMeta(key: string, value: string): void {
      stmt(
        'INSERT INTO library_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ).run(key, value);
    },
  };
}

/** The creator's collections of library items. */
function collectionCalls(db: DatabaseSync, stmt: Statement, now: () => number) {
  return {
    createCollection(name: string): Collection {
      const trimmed = name.trim();
      if (!trimmed) throw new Error('A collection needs a name');
      const c = { id: randomUUID(), name: trimmed, createdAt: now(), size: 0 };
      stmt('INSERT INTO library_collections (id, name, created_at) VALUES (?, ?, ?)').run(c.id, c.name, c.createdAt);
      return c;
    },

    renameCollection(id: string, name: string): void {
      stmt('UPDATE library_collections SET name = ? WHERE id = ?').run(name.trim(), id);
    },

    deleteCollection(id: string): void {
      stmt('DELETE FROM library_collections WHERE id = ?').run(id);
    },

    collections(): Collection[] {
      return (
        stmt(
          `SELECT c.id, c.name, c.created_at, (SELECT count(*) FROM library_collection_items ci WHERE ci.collection_id = c.id) AS size
         FROM library_collections c ORDER BY c.created_at`,
        ).all() as { id: string; name: string; created_at: number; size: number }[]
      ).map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, size: r.size }));
    },

    addToCollection(collectionId: string, itemIds: readonly string[]): void {
      const add = stmt(
        'INSERT OR IGNORE INTO library_collection_items (collection_id, item_id, added_at) VALUES (?, ?, ?)',
      );
      const at = now();
      transaction(db, () => {
        for (const id of itemIds) add.run(collectionId, id, at);
      });
    },

    removeFromCollection(collectionId: string, itemIds: readonly string[]): void {
      const del = stmt('DELETE FROM library_collection_items WHERE collection_id = ? AND item_id = ?');
      transaction(db, () => {
        for (const id of itemIds) del.run(collectionId, id);
      });
    },
  };
}
