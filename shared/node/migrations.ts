import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './sqlite.ts';

/**
 * One schema step. `version` numbers only ever grow; gaps are allowed so that work landing in
 * parallel can reserve numbers. A step never changes once released: a new need is a new step.
 */
export interface Migration {
  readonly version: number;
  /** What the step does, for error messages and `migrate` output. */
  readonly name: string;
  readonly up: (db: DatabaseSync) => void;
}

export class SchemaTooNewError extends Error {
  readonly found: number;
  readonly known: number;
  constructor(what: string, found: number, known: number) {
    super(
      `${what} has schema version ${found}, newer than the ${known} this program knows; ` +
        'it was written by a newer Clipdesk. Upgrade this program instead of downgrading the data.',
    );
    this.name = 'SchemaTooNewError';
    this.found = found;
    this.known = known;
  }
}

/** A database older than the program (`serve --no-migrate`): it needs `migrate` first. */
export class SchemaOutOfDateError extends Error {
  readonly found: number;
  readonly needed: number;
  constructor(what: string, found: number, needed: number) {
    super(`${what} has schema version ${found}; this program needs version ${needed}`);
    this.name = 'SchemaOutOfDateError';
    this.found = found;
    this.needed = needed;
  }
}

/** The newest version among `migrations` (0 for none). */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/**
 * Checks, without changing anything, that `db` is exactly at the newest version: older throws
 * SchemaOutOfDateError, newer SchemaTooNewError. Returns the version.
 */
export function requireCurrentSchema(db: DatabaseSync, what: string, migrations: readonly Migration[]): number {
  const latest = latestVersion(migrations);
  const current = schemaVersion(db);
  if (current > latest) throw new SchemaTooNewError(what, current, latest);
  if (current < latest) throw new SchemaOutOfDateError(what, current, latest);
  return current;
}

/**
 * The one versioned migration runner (SQLite's `user_version`) for the app's library, the job
 * journal and the service database. Each pending step runs in its own IMMEDIATE transaction
 * together with the version bump, so a crash between steps leaves a database at a known version,
 * and two processes migrating at once serialise on the write lock: the second sees the version the
 * first wrote and skips the step. A database written by a newer program is refused, never touched.
 * Returns the versions applied.
 */
export function migrate(db: DatabaseSync, what: string, migrations: readonly Migration[]): number[] {
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.version === sorted[i - 1]!.version) {
      throw new Error(`${what}: two migrations share version ${sorted[i]!.version}`);
    }
  }
  const latest = sorted.at(-1)?.version ?? 0;
  const current = schemaVersion(db);
  if (current > latest) throw new SchemaTooNewError(what, current, latest);
  const applied: number[] = [];
  for (const step of sorted) {
    if (step.version <= current) continue;
    transaction(db, () => {
      // Re-read under the write lock: another process may have applied this step meanwhile.
      if (schemaVersion(db) >= step.version) return;
      step.up(db);
      db.exec(`PRAGMA user_version = ${step.version}`);
      applied.push(step.version);
    });
  }
  return applied;
}

export function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number } | undefined;
  return row?.user_version ?? 0;
}
