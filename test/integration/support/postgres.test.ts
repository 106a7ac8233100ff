import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres } from '../../support/postgres.ts';

const unavailable = postgresUnavailable();
if (unavailable) console.log(`skipping the PostgreSQL harness test: ${unavailable}`);

describe.skipIf(unavailable !== null)('a private PostgreSQL cluster (test/support/postgres.ts)', () => {
  it('starts in a temp dir, answers queries on loopback, and leaves nothing once stopped', async () => {
    const cluster = await startPostgres();
    try {
      expect(cluster.url).toBe(`postgres://postgres@127.0.0.1:${cluster.port}/postgres`);
      expect(statSync(cluster.dir).isDirectory()).toBe(true);
      const client = new pg.Client({ connectionString: cluster.url });
      await client.connect();
      const { rows } = await client.query<{ sum: number; user: string; addr: string }>(
        'SELECT 20 + 22 AS sum, current_user AS user, host(inet_server_addr()) AS addr',
      );
      await client.end();
      expect(rows).toEqual([{ sum: 42, user: 'postgres', addr: '127.0.0.1' }]);
      // As root, the server runs as an unprivileged user (PostgreSQL refuses root).
      if (process.getuid?.() === 0) expect(statSync(`${cluster.dir}/data`).uid).not.toBe(0);

      const otherUrl = await cluster.createDatabase('harness_other');
      const other = new pg.Client({ connectionString: otherUrl });
      await other.connect();
      const db = await other.query<{ db: string }>('SELECT current_database() AS db');
      await other.end();
      expect(db.rows[0]?.db).toBe('harness_other');
    } finally {
      await cluster.stop();
    }
    expect(existsSync(cluster.dir)).toBe(false);
    // Stopped means stopped: nothing listens on its port any more.
    const late = new pg.Client({ connectionString: cluster.url, connectionTimeoutMillis: 2_000 });
    await expect(late.connect()).rejects.toThrow();
  });

  it('a process that exits without stopping its cluster still stops and removes it', async () => {
    const script = `
      import { startPostgres } from ${JSON.stringify(new URL('../../support/postgres.ts', import.meta.url).href)};
      const cluster = await startPostgres();
      console.log(JSON.stringify({ dir: cluster.dir, url: cluster.url }));
      process.exit(0);
    `;
    const out = await new Promise<string>((done, fail) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], (error, stdout, stderr) =>
        error ? fail(new Error(`${error.message}\n${stderr}`)) : done(stdout),
      ),
    );
    const { dir, url } = JSON.parse(out) as { dir: string; url: string };
    expect(existsSync(dir)).toBe(false);
    const late = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    await expect(late.connect()).rejects.toThrow();
  });
});
