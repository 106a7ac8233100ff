import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, schemaVersion } from '../../../shared/node/migrations.ts';
import { openSqlite } from '../../../shared/node/sqlite.ts';
import { SERVICE_MIGRATIONS, SERVICE_SCHEMA_VERSION } from '../../../server/storage/sqlite-migrations.ts';
import { waitUntil } from '../../support/processes.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import { clientFor, onPostgres } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Ran>((r) => child.on('close', (code) => r({ code, stdout, stderr })));
  return { child, done };
}

const cli = (args: string[], env?: NodeJS.ProcessEnv) => start(args, env).done;

/** Whether process `pid` has `file` open (Linux /proc). */
function hasOpen(pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

const appliedVersions = (out: string) =>
  [...out.matchAll(/^applied schema version (\d+): /gm)].map((m) => Number(m[1]));

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-migrate-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

// The PostgreSQL pass (helpers.ts, TEST_DATABASE) skips this file: it is about the SQLite file's migrations.
describe.skipIf(onPostgres)('clipdesk-service migrate', () => {
  it('creates the schema, then has nothing to do', async () => {
    const first = await cli(['migrate', '--data', dataDir]);
    expect(first.code).toBe(0);
    expect(appliedVersions(first.stdout)).toEqual(SERVICE_MIGRATIONS.map((m) => m.version));
    expect(first.stdout).toContain(`is now at schema version ${SERVICE_SCHEMA_VERSION}`);
    const again = await cli(['migrate', '--data', dataDir, '--database', 'sqlite:']);
    expect(again.code).toBe(0);
    expect(appliedVersions(again.stdout)).toEqual([]);
    expect(again.stdout).toContain(`is already at schema version ${SERVICE_SCHEMA_VERSION}`);
  });

  it('updates an older database from where it is', async () => {
    const db = openSqlite(join(dataDir, 'service.db'));
    migrate(db, 'test', SERVICE_MIGRATIONS.slice(0, 2));
    db.close();
    const res = await cli(['migrate', '--data', dataDir]);
    expect(res.code).toBe(0);
    expect(appliedVersions(res.stdout)).toEqual(SERVICE_MIGRATIONS.slice(2).map((m) => m.version));
  });

  it.skipIf(process.platform !== 'linux')(
    'two at once on one data dir: the second waits for the lock, and every step runs exactly once',
    async () => {
      const file = join(dataDir, 'service.db');
      // Hold the write lock until both processes have the database open, so that they surely
      // contend for it rather than run one after the other.
      const holder = openSqlite(file);
      holder.exec('BEGIN IMMEDIATE');
      const a = start(['migrate', '--data', dataDir]);
      const b = start(['migrate', '--data', dataDir]);
      const bothOpen = await waitUntil(() => hasOpen(a.child.pid!, file) && hasOpen(b.child.pid!, file), 30_000);
      holder.exec('ROLLBACK');
      const [ra, rb] = await Promise.all([a.done, b.done]);
      expect(bothOpen).toBe(true);
      expect([ra.code, rb.code, ra.stderr, rb.stderr]).toEqual([0, 0, '', '']);
      const applied = [...appliedVersions(ra.stdout), ...appliedVersions(rb.stdout)].sort((x, y) => x - y);
      expect(applied).toEqual(SERVICE_MIGRATIONS.map((m) => m.version));
      expect(schemaVersion(holder)).toBe(SERVICE_SCHEMA_VERSION);
      holder.close();
    },
  );

  it('refuses, untouched, a database written by a newer build (exit 1), and so does serve', async () => {
    const db = openSqlite(join(dataDir, 'service.db'));
    db.exec(`PRAGMA user_version = ${SERVICE_SCHEMA_VERSION + 1}`);
    db.close();
    const res = await cli(['migrate', '--data', dataDir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `has schema version ${SERVICE_SCHEMA_VERSION + 1}, newer than the ${SERVICE_SCHEMA_VERSION}`,
    );
    expect(res.stderr).toContain('Upgrade this program');
    await expect(serveProcess(dataDir)).rejects.toThrow(/serve exited 1: .*newer than the/s);
    const after = openSqlite(join(dataDir, 'service.db'));
    expect(schemaVersion(after)).toBe(SERVICE_SCHEMA_VERSION + 1);
    expect(after.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get()).toEqual({ n: 0 });
    after.close();
  });

  it('serve migrates at start; with --no-migrate it refuses a database that needs migrating', async () => {
    const db = openSqlite(join(dataDir, 'service.db'));
    migrate(db, 'test', SERVICE_MIGRATIONS.slice(0, 2));
    db.close();
    await expect(serveProcess(dataDir, { args: ['--no-migrate'] })).rejects.toThrow(
      new RegExp(
        `serve exited 1: .*has schema version 2; this program needs version ${SERVICE_SCHEMA_VERSION}\\. ` +
          'Run `clipdesk-service migrate --data .*` first, or start serve without --no-migrate',
        's',
      ),
    );
    const untouched = openSqlite(join(dataDir, 'service.db'));
    expect(schemaVersion(untouched)).toBe(2);
    untouched.close();

    const served = await serveProcess(dataDir);
    const key = (await cli(['keys', 'create', '--user', 'mig', '--data', dataDir])).stdout.trim();
    expect((await clientFor(served.url, key).call('GET', '/models')).status).toBe(200);
    served.child.kill('SIGTERM');
    await exited(served.child);
    const migrated = openSqlite(join(dataDir, 'service.db'));
    expect(schemaVersion(migrated)).toBe(SERVICE_SCHEMA_VERSION);
    migrated.close();

    const current = await serveProcess(dataDir, { args: ['--no-migrate'] });
    current.child.kill('SIGTERM');
    expect(await exited(current.child)).toBe(null);
  });
});

describe.skipIf(onPostgres)('--database and --storage on every command', () => {
  const commands = [
    ['serve', '--port', '0'],
    ['keys', 'list', '--user', 'x'],
    ['users', 'set-tier', 'x', 'pro'],
  ];

  const url = 'postgres://clipdesk:pw-not-shown@127.0.0.1:1/clipdesk';
  const named = 'the PostgreSQL database postgres://clipdesk@127.0.0.1:1/clipdesk';

  it.each(commands)(
    '%s …: a PostgreSQL database that cannot be reached is named, exit 1, no password echoed',
    async (...command) => {
      const res = await cli([...command, '--data', dataDir, '--database', url]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`cannot reach ${named}`);
      expect(res.stderr).not.toContain('pw-not-shown');
      // No SQLite database was made instead.
      expect(readdirSync(dataDir)).not.toContain('service.db');
    },
  );

  it('providers … keep their keys in the data directory, whatever the database', async () => {
    const res = await cli(['providers', 'list', '--data', dataDir, '--database', url]);
    expect(res.code).toBe(0);
    expect(res.stderr).not.toContain('pw-not-shown');
  });

  it('CLIPDESK_DATABASE_URL and CLIPDESK_STORAGE_URL are read like the flags', async () => {
    const byEnv = await cli(['users', 'set-tier', 'x', 'pro', '--data', dataDir], {
      ...process.env,
      CLIPDESK_DATABASE_URL: url,
    });
    expect(byEnv.code).toBe(1);
    expect(byEnv.stderr).toContain(`cannot reach ${named}`);
    // Files are not the schema's: migrate takes an S3 location and leaves it alone.
    const s3 = await cli(['migrate', '--data', dataDir], {
      ...process.env,
      CLIPDESK_STORAGE_URL: 's3://media/team',
    });
    expect(s3.code).toBe(0);
    expect(s3.stdout).toContain('schema version');
  });
});
