import type { DatabaseSync } from 'node:sqlite';

/**
 * node:sqlite, opened the same way by the app's library and job journal and by the service.
 * It is loaded on first use, after the warning filter is in place: a static import would print
 * its ExperimentalWarning before the filter could drop it.
 */
export function openSqlite(path: string): DatabaseSync {
  silenceSqliteWarning();
  const sqlite = process.getBuiltinModule('node:sqlite');
  const db = new sqlite.DatabaseSync(path);
  // WAL lets readers (the UI, the service CLI) work while another connection writes; busy_timeout
  // covers the overlap. synchronous=NORMAL is durable across process crashes in WAL mode (a power
  // cut may lose the last transactions, never corrupt the file). busy_timeout comes first: switching
  // a new file to WAL takes a lock that another process opening it at the same moment may hold.
  db.exec(
    'PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;',
  );
  return db;
}

/** Runs `fn` in one transaction (IMMEDIATE: the write lock is taken up front): all of its writes land, or none do. */
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

let silenced = false;

/**
 * node:sqlite prints an ExperimentalWarning on first use. The app and the service are products,
 * not demos of Node's flags: drop exactly that one warning and let every other warning through.
 */
export function silenceSqliteWarning(): void {
  if (silenced) return;
  silenced = true;
  const original = process.emitWarning.bind(process);
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const name = typeof warning === 'string' ? type : warning.name;
    if (name === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    (original as (...args: unknown[]) => void)(warning, ...rest);
  };
}
