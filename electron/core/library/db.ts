import { DatabaseSync } from 'node:sqlite';

/**
 * Opens (or creates) a SQLite file for the library and the job journal. WAL lets the UI read
 * while a sync writes; `synchronous=NORMAL` is durable across app crashes in WAL mode (a
 * power cut may lose the last transactions, never corrupt the file).
 */
export function openDatabase(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
  return db;
}

/** Runs `fn` in one transaction (IMMEDIATE: the write lock is taken up front). */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}
