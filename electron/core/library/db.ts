import type { DatabaseSync } from 'node:sqlite';
import { openSqlite } from '../../../shared/node/sqlite.ts';

export { transaction } from '../../../shared/node/sqlite.ts';

/** Opens (or creates) a SQLite file for the library (WAL; see openSqlite). */
export function openDatabase(path: string): DatabaseSync {
  return openSqlite(path);
}
