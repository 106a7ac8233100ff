import { join } from 'node:path';
import type { Migration } from '../../shared/node/migrations.ts';
import { migrate, requireCurrentSchema, schemaVersion } from '../../shared/node/migrations.ts';
import { openSqlite } from '../../shared/node/sqlite.ts';
import { SERVICE_MIGRATIONS } from './sqlite-migrations.ts';
import { SqliteSql } from './sql/sqlite.ts';
import type { Sql, SqlDatabase } from './sql/types.ts';

/**
 * The service's rows: the embedded SQLite file (node:sqlite, WAL) by default, or PostgreSQL
 * (server/storage/sql). Modules take this handle, which is the database or a transaction's handle
 * alike. Files are not here: they live in the BlobStore (server/storage/blobs), beside the SQLite
 * file in the data directory on disk by default, or in a bucket. A media row is only inserted
 * after all its files are stored, so a row always points at complete files.
 */
export type Db = Sql;

/** How errors and `migrate` name the database. */
export function describeDatabase(dataDir: string): string {
  return `the service database in ${dataDir}`;
}

/**
 * Opens the service database. By default it is migrated to this build's version first (the
 * embedded engine, `keys`, `users`). `migrate: false` (`serve --no-migrate`) changes nothing and
 * refuses a database at any other version (SchemaOutOfDateError, SchemaTooNewError).
 */
export function openDatabase(dataDir: string, options: { migrate?: boolean } = {}): SqliteSql {
  // WAL (see openSqlite) lets the CLI (keys, tiers) write while a server reads.
  const db = openSqlite(join(dataDir, 'service.db'));
  try {
    if (options.migrate === false) requireCurrentSchema(db, describeDatabase(dataDir), SERVICE_MIGRATIONS);
    else migrate(db, describeDatabase(dataDir), SERVICE_MIGRATIONS);
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteSql(db, describeDatabase(dataDir));
}

/**
 * `clipdesk-service migrate` on SQLite: brings the database to this build's version and returns
 * the steps it applied (none when it already was). Each step runs in an IMMEDIATE transaction
 * with its version bump (shared/node/migrations.ts), so a second process migrating at once waits
 * for the write lock, then finds the step done. `lockWaitMs` bounds that wait: a step over a
 * large database (version 3 indexes 100,000 items in about 15 s) outlasts the usual 5 s.
 */
export function migrateDatabase(dataDir: string, lockWaitMs = 300_000): { applied: Migration[]; version: number } {
  const db = openSqlite(join(dataDir, 'service.db'));
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(lockWaitMs))}`);
    const versions = new Set(migrate(db, describeDatabase(dataDir), SERVICE_MIGRATIONS));
    return { applied: SERVICE_MIGRATIONS.filter((m) => versions.has(m.version)), version: schemaVersion(db) };
  } finally {
    db.close();
  }
}

/** Where the service keeps its rows: the data directory's SQLite file, or a PostgreSQL database. */
export type DatabaseLocation = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string };

/**
 * Opens the service database where `location` says, migrated to this build's schema first unless
 * `migrate` is false (then a database at another version is refused, unchanged). A PostgreSQL
 * database that cannot be reached is a DatabaseUnreachableError naming it (never its password).
 */
export async function openServiceDatabase(
  location: DatabaseLocation,
  options: { migrate?: boolean } = {},
): Promise<SqlDatabase> {
  if (location.kind === 'sqlite') return openDatabase(location.dataDir, options);
  // Loaded only for PostgreSQL: the embedded engine starts without the driver.
  const { DatabaseUnreachableError, describePostgres, migratePostgres, reason, requirePostgresSchema } =
    await import('./pg/migrate.ts');
  const { PostgresSql } = await import('./sql/postgres.ts');
  const { url } = location;
  const what = describePostgres(url);
  if (options.migrate !== false) await migratePostgres(url);
  const db = new PostgresSql(url, what);
  try {
    try {
      await db.get('SELECT 1');
    } catch (error) {
      throw new DatabaseUnreachableError(`cannot reach ${what}: ${reason(error, url)}`);
    }
    await db.checkStatementPooler();
    await requirePostgresSchema(db, what);
    return db;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}
