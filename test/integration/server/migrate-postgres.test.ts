import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/storage/db.ts';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../../server/storage/pg/migrate.ts';
import { postgresUnavailable, startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import { onPostgres } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
/** The advisory lock migrate takes ('cdsk', 'migr'). */
const LOCK = [0x6364736b, 0x6d696772];
/** Every table of the PostgreSQL schema: the SQLite schema's, and POSTGRES_ONLY. */
const TABLES = [
  'api_keys',
  'generations',
  'idempotency',
  // The sweep's lease and the storage reservations (schema-v8.sql), as on SQLite.
  'leases',
  'media',
  // The listing's counters (schema-v5.sql), as on SQLite.
  'media_counts',
  'media_public_counts',
  // The operator catalog a sync writes, read by every node (schema-v15.sql): PostgreSQL only.
  'operator_catalog',
  // Remote providers' health, shared by the nodes (schema-v9.sql): PostgreSQL only.
  'provider_health',
  'provider_jobs',
  'rate_counters',
  'running_slots',
  'schema_migrations',
  'settings',
  'storage_reservations',
  'uploads',
  'user_limits',
  'users',
  'webhook_deliveries',
];

/** Tables only PostgreSQL has: what the nodes share, that SQLite's one node keeps in memory. */
const POSTGRES_ONLY = ['operator_catalog', 'provider_health'];

/** SQLite tables of the FTS5 listing (and their shadow tables), which PostgreSQL does not need. */
const SQLITE_LISTING = ['media_find', 'media_grams', 'media_terms', 'media_positions', 'media_version'];

const unavailable = postgresUnavailable();
if (unavailable) console.log(`skipping migrate on PostgreSQL: ${unavailable}`);

function start(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((r) =>
    child.on('close', (code) => r({ code, stdout, stderr })),
  );
  return { child, done };
}

const appliedVersions = (out: string) =>
  [...out.matchAll(/^applied schema version (\d+): /gm)].map((m) => Number(m[1]));

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

let cluster: PrivatePostgres;
beforeAll(async () => {
  if (!unavailable) cluster = await startPostgres();
});
afterAll(async () => {
  await cluster?.stop();
});

// The PostgreSQL pass (helpers.ts, TEST_DATABASE) skips this file: it starts a cluster of its own and already runs in the SQLite pass.
describe.skipIf(unavailable !== null || onPostgres)('clipdesk-service migrate --database postgres://…', () => {
  it('two at once: the second waits on the advisory lock, the schema is applied exactly once', async () => {
    const url = await cluster.createDatabase('migrate_twice');
    // Hold the migration lock until both processes wait on it, so that they surely contend.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1, $2)', LOCK);
    const a = start(['migrate', '--database', url]);
    const b = start(['migrate', '--database', url]);
    let waiting = 0;
    for (let i = 0; i < 1200 && waiting < 2; i++) {
      const rows = await query<{ n: number }>(
        url,
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
      );
      waiting = rows[0]?.n ?? 0;
      if (waiting < 2) await new Promise((r) => setTimeout(r, 25));
    }
    await holder.query('SELECT pg_advisory_unlock($1, $2)', LOCK);
    await holder.end();
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(waiting).toBe(2);
    expect([ra.code, rb.code, ra.stderr, rb.stderr]).toEqual([0, 0, '', '']);
    expect([...appliedVersions(ra.stdout), ...appliedVersions(rb.stdout)].sort((x, y) => x - y)).toEqual(
      PG_MIGRATIONS.map((m) => m.version),
    );
    const described = `the PostgreSQL database postgres://postgres@127.0.0.1:${cluster.port}/migrate_twice`;
    expect(`${ra.stdout}${rb.stdout}`).toContain(`${described} is now at schema version ${PG_SCHEMA_VERSION}`);
    expect(`${ra.stdout}${rb.stdout}`).toContain(`${described} is already at schema version ${PG_SCHEMA_VERSION}`);

    const tables = await query<{ name: string }>(
      url,
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    expect(tables.map((t) => t.name)).toEqual(TABLES);
    expect(await query(url, 'SELECT version, name FROM schema_migrations')).toEqual(
      PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
    );
    // The generation queue's schema is pg-boss's own (it takes its own lock), with the queue in it.
    expect(`${ra.stdout}${rb.stdout}`).toContain('the generation queue (schema pgboss) is installed and up to date');
    expect(
      await query(url, "SELECT name, heartbeat_seconds FROM pgboss.queue WHERE name = 'clipdesk-generations'"),
    ).toEqual([{ name: 'clipdesk-generations', heartbeat_seconds: 30 }]);
    // The tables take the rows the SQLite service writes.
    await query(url, "INSERT INTO users (id, tier, created_at) VALUES ('ada', 'pro', 1767268800000)");
    await query(
      url,
      'INSERT INTO rate_counters (user_id, minute_start, minute_count, hour_start, hour_count, day_start, day_count) VALUES ($1, 0, 1, 0, 1, 0, 1)',
      ['ada'],
    );

    // Idempotent: once more, nothing to do.
    const again = await start(['migrate', '--database', url]).done;
    expect([again.code, appliedVersions(again.stdout)]).toEqual([0, []]);
  });

  it('mirrors every table and column of the SQLite schema at its newest version', async () => {
    const url = await cluster.createDatabase('migrate_parity');
    expect((await start(['migrate', '--database', url]).done).code).toBe(0);
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-parity-'));
    const sqlite = openDatabase(dir);
    try {
      const sqliteTables = (
        await sqlite.all<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
      )
        .map((t) => t.name)
        // GET /media's FTS5 machinery (db.ts, version 3): PostgreSQL lists through its own indexes.
        .filter((name) => !SQLITE_LISTING.some((prefix) => name === prefix || name.startsWith(`${prefix}_`)));
      expect([...sqliteTables, 'schema_migrations', ...POSTGRES_ONLY].sort()).toEqual(TABLES);
      for (const table of sqliteTables) {
        const onSqlite = (await sqlite.all<{ name: string }>(`PRAGMA table_info(${table})`)).map((c) => c.name);
        const onPostgres = (
          await query<{ name: string }>(
            url,
            "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
            [table],
          )
        ).map((c) => c.name);
        // SQLite's implicit rowid is a column of its own on PostgreSQL (schema-v2.sql); a generation's
        // lease belongs to the work queue, which only PostgreSQL has (schema-v6.sql); the counters'
        // `changes` are the listing's versions there (schema-v7.sql), media_version on SQLite.
        const implicit =
          {
            webhook_deliveries: ['rowid'],
            generations: ['lease_owner'],
            media_counts: ['changes'],
            media_public_counts: ['changes'],
          }[table] ?? [];
        expect({ table, columns: [...onSqlite, ...implicit].sort() }).toEqual({ table, columns: onPostgres.sort() });
      }
    } finally {
      await sqlite.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serve --no-migrate runs on a migrated database, its generation queue included, and is ready', async () => {
    const url = await cluster.createDatabase('migrate_then_serve');
    expect((await start(['migrate', '--database', url]).done).code).toBe(0);
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-no-migrate-'));
    const node = await serveProcess(dir, { args: ['--no-migrate', '--database', url] });
    try {
      const ready = await fetch(new URL('/readyz', node.url));
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    } finally {
      node.child.kill('SIGTERM');
      await exited(node.child);
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a database at a newer schema version, changing nothing (exit 1)', async () => {
    const url = await cluster.createDatabase('migrate_newer');
    expect((await start(['migrate', '--database', url]).done).code).toBe(0);
    await query(url, "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')", [
      PG_SCHEMA_VERSION + 1,
    ]);
    const res = await start(['migrate', '--database', url]).done;
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`has schema version ${PG_SCHEMA_VERSION + 1}, newer than the ${PG_SCHEMA_VERSION}`);
  });

  it('an unreachable database: exit 1, naming it without its password', async () => {
    // The cluster's port with a database that does not exist, then a port where nothing listens.
    const missing = `postgres://postgres:pw-not-shown@127.0.0.1:${cluster.port}/no_such_db`;
    const res = await start(['migrate', '--database', missing]).done;
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `cannot reach the PostgreSQL database postgres://postgres@127.0.0.1:${cluster.port}/no_such_db`,
    );
    expect(res.stderr).not.toContain('pw-not-shown');
    const closed = await start(['migrate', '--database', 'postgres://postgres:pw-not-shown@127.0.0.1:1/x']).done;
    expect(closed.code).toBe(1);
    expect(closed.stderr).toContain('cannot reach the PostgreSQL database postgres://postgres@127.0.0.1:1/x');
    expect(closed.stderr).not.toContain('pw-not-shown');
  });
});
