import type { DatabaseSync } from 'node:sqlite';
import { openSqlite } from '../../../shared/node/sqlite.ts';

/** Opens (or creates) the job journal's SQLite file (WAL; see openSqlite); createJobJournal adds its tables. */
export function openJournalDatabase(path: string): DatabaseSync {
  return openSqlite(path);
}
