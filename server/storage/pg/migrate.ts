import { readFileSync } from 'node:fs';
import pg from 'pg';
import { SchemaOutOfDateError, SchemaTooNewError } from '../../../shared/node/migrations.ts';
import type { Sql } from '../sql/types.ts';

/**
 * The service's schema on PostgreSQL (`clipdesk-service migrate --database postgres://…`).
 * Each version is a SQL file beside this module (copied beside the bundle by
 * scripts/build-node.ts), applied once and recorded in `schema_migrations`. Nothing else in the
 * service opens it through server/storage/sql (`serve --database postgres://…`).
 *
 * All pending versions run in one transaction that first takes a transaction-scoped advisory lock
 * (`pg_advisory_xact_lock`): a second `migrate` (another node starting at the same moment) waits
 * on the lock, then finds the versions recorded and does nothing. PostgreSQL's DDL is
 * transactional, so a failure leaves the database as it was. A database recorded at a newer
 * version than this build knows is refused before anything changes.
 */
export interface PgMigration {
  readonly version: number;
  readonly name: string;
  readonly file: string;
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  { version: 1, name: 'initial schema (the SQLite schema of version 6)', file: 'schema-v1.sql' },
  { version: 2, name: 'media listing and search indexes (pg_trgm), delivery order', file: 'schema-v2.sql' },
  { version: 3, name: 'rate windows counted atomically, one row per account', file: 'schema-v3.sql' },
  { version: 4, name: 'concurrent generations held as leased rows', file: 'schema-v4.sql' },
  { version: 5, name: 'media listing totals from counters', file: 'schema-v5.sql' },
  { version: 6, name: 'generations leased by the work queue', file: 'schema-v6.sql' },
  {
    version: 7,
    name: 'media listing versions from counters, for remembered totals and anchors',
    file: 'schema-v7.sql',
  },
  { version: 8, name: 'storage reservations and node leases held as leased rows', file: 'schema-v8.sql' },
  { version: 9, name: "remote providers' health and cooldowns shared by the nodes", file: 'schema-v9.sql' },
  { version: 10, name: 'finished generations by their end, for retention', file: 'schema-v10.sql' },
  { version: 11, name: 'prompt search indexes without a pending list', file: 'schema-v11.sql' },
  { version: 12, name: 'generations made by synchronous requests', file: 'schema-v12.sql' },
  { version: 13, name: "the key of each upload's received bytes", file: 'schema-v13.sql' },
  { version: 14, name: 'rotated webhook secrets sign beside the new one for a day', file: 'schema-v14.sql' },
  { version: 15, name: 'the operator catalog a sync writes, shared by the nodes', file: 'schema-v15.sql' },
  { version: 16, name: "each generation's plan, which a restart runs from", file: 'schema-v16.sql' },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The advisory lock every Clipdesk migration takes: 'cdsk' 'migr' as two 32-bit keys. */
const LOCK_KEYS = [0x6364736b, 0x6d696772] as const;

/** The database unreachable or refusing us: exit 1 with this message (it never holds a password). */
export class DatabaseUnreachableError extends Error {}

/** `postgres://USER@HOST:PORT/DB`: how messages name the database, without its password. */
export function describePostgres(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username === '' ? '' : `${decodeURIComponent(u.username)}@`;
    return `the PostgreSQL database ${u.protocol}//${user}${u.host}${u.pathname}`;
  } catch {
    return 'the PostgreSQL database';
  }
}

export async function migratePostgres(
  url: string,
  options: { lockWaitMs?: number; connectTimeoutMs?: number } = {},
): Promise<{ applied: PgMigration[]; version: number }> {
  const what = describePostgres(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000 });
  // A connection lost mid-way would otherwise be an unhandled 'error' event.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new DatabaseUnreachableError(`cannot reach ${what}: ${reason(error, url)}`);
  }
  try {
    await client.query('BEGIN');
    try {
      // A bound on the wait for another node's migration; 0 waits as long as it takes.
      await client.query(`SET LOCAL lock_timeout = ${Math.max(0, Math.floor(options.lockWaitMs ?? 300_000))}`);
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...LOCK_KEYS]);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
      )`);
      const found = await client.query<{ version: number | null }>(
        'SELECT max(version) AS version FROM schema_migrations',
      );
      const current = found.rows[0]?.version ?? 0;
      if (current > PG_SCHEMA_VERSION) throw new SchemaTooNewError(what, current, PG_SCHEMA_VERSION);
      const applied: PgMigration[] = [];
      for (const step of [...PG_MIGRATIONS].sort((a, b) => a.version - b.version)) {
        if (step.version <= current) continue;
        await client.query(readFileSync(new URL(`./${step.file}`, import.meta.url), 'utf8'));
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [step.version, step.name]);
        applied.push(step);
      }
      await client.query('COMMIT');
      return { applied, version: Math.max(current, ...applied.map((m) => m.version)) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `serve --no-migrate`: the database must be at exactly this build's version; nothing is changed.
 * A database never migrated counts as version 0.
 */
export async function requirePostgresSchema(db: Sql, what: string): Promise<number> {
  const table = await db.get<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  const current =
    table?.t == null
      ? 0
      : ((await db.get<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations'))?.v ?? 0);
  if (current > PG_SCHEMA_VERSION) throw new SchemaTooNewError(what, current, PG_SCHEMA_VERSION);
  if (current < PG_SCHEMA_VERSION) throw new SchemaOutOfDateError(what, current, PG_SCHEMA_VERSION);
  return current;
}

/** Why a connection failed, without the URL's password should a driver message quote it. */
export function reason(error: unknown, url: string): string {
  let text = error instanceof Error ? error.message : String(error);
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password !== '') text = text.split(password).join('[redacted]');
  } catch {
    // Not a URL: nothing to redact from it.
  }
  if (text === '') text = (error as { code?: string }).code ?? 'connection failed';
  return text;
}
