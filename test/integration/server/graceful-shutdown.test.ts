import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logFilePath } from '../../../shared/node/log-path.ts';
import { openSqlite } from '../../../shared/node/sqlite.ts';
import { ffmpegDescendants, isRunning, waitUntil } from '../../support/processes.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import type { ServedProcess } from '../../support/service-process.ts';
import { SMALL_VIDEO, clientFor, onPostgres } from './helpers.ts';
import type { ApiResponse } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
/** The longest render the catalog allows: surely still rendering when the grace period ends. */
const LONG_VIDEO = { model: 'clipdesk/drift', duration: 10, size: '1080p', prompt: 'a long slow pan at night' };

let dataDir: string;
let key: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-graceful-'));
  const created = spawn(process.execPath, [
    BIN,
    'keys',
    'create',
    '--user',
    'grace',
    '--tier',
    'pro',
    '--data',
    dataDir,
  ]);
  let out = '';
  created.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => created.once('close', r));
  key = out.trim();
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** Resolves true once a new TCP connection to `port` is refused (within `capMs`). */
async function refusesConnections(port: number, capMs: number): Promise<boolean> {
  const deadline = Date.now() + capMs;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((r) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        r(false);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => r(error.code === 'ECONNREFUSED'));
    });
    if (refused) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** A request in flight and the service rendering it (an ffmpeg below the process). */
async function rendering(served: ServedProcess, body: unknown, headers: Record<string, string> = {}) {
  const response = clientFor(served.url, key).call('POST', '/videos/generations', body, headers);
  let ffmpeg: number[] = [];
  const found = await waitUntil(() => (ffmpeg = ffmpegDescendants(served.child.pid!)).length > 0, 30_000);
  expect(found).toBe(true);
  return { response, ffmpeg: ffmpeg[0]! };
}

function rows(sqlText: string): unknown[] {
  const db = openSqlite(join(dataDir, 'service.db'));
  try {
    return db.prepare(sqlText).all();
  } finally {
    db.close();
  }
}

// The PostgreSQL pass (helpers.ts, TEST_DATABASE) skips this file: it runs `clipdesk-service serve` processes on a data directory's SQLite file.
describe.skipIf(process.platform !== 'linux' || onPostgres)('serve on SIGTERM', () => {
  it('stops accepting connections, lets the request in flight finish, closes the database and exits 0', async () => {
    const served = await serveProcess(dataDir, { args: ['--shutdown-grace', '120'] });
    const port = Number(new URL(served.url).port);
    const exit = exited(served.child);
    const { response } = await rendering(served, { ...SMALL_VIDEO, prompt: 'a paper boat' });
    served.child.kill('SIGTERM');
    // The listener is closed while the render still runs…
    expect(await refusesConnections(port, 20_000)).toBe(true);
    // …and the request it had taken is answered in full.
    const res: ApiResponse = await response;
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(await exit).toBe(null);
    expect(served.child.exitCode).toBe(0);
    // Committed and charged once; the database was closed cleanly (WAL checkpointed away).
    expect(rows('SELECT count(*) AS n FROM media')).toEqual([{ n: 1 }]);
    const log = readFileSync(logFilePath(dataDir, 'service'), 'utf8');
    expect(log).toContain('waiting up to 120 s for 1 request in flight');
    expect(log).toContain('"msg":"stopped"');
  });

  it('past the grace period, the request is aborted: answered 503, nothing charged, its ffmpeg gone, exit 0', async () => {
    const served = await serveProcess(dataDir, { args: ['--shutdown-grace', '1'] });
    const exit = exited(served.child);
    const { response, ffmpeg } = await rendering(served, LONG_VIDEO);
    served.child.kill('SIGTERM');
    const res = await response.catch((error: unknown) => ({ status: 0, body: String(error) }) as ApiResponse);
    expect(await exit).toBe(null);
    expect(served.child.exitCode).toBe(0);
    expect(isRunning(ffmpeg)).toBe(false);
    expect(res.status).toBe(503);
    expect(res.body.message).toContain('shutting down');
    expect(rows('SELECT count(*) AS n FROM media')).toEqual([{ n: 0 }]);
    expect(rows('SELECT sum(cost) AS cost FROM api_keys')).toEqual([{ cost: 0 }]);
    const log = readFileSync(logFilePath(dataDir, 'service'), 'utf8');
    expect(log).toContain('1 request still in flight after 1 s are aborted');
  });

  it('an asynchronous generation is handed back, not finished: the next start resumes it', async () => {
    const served = await serveProcess(dataDir, { args: ['--shutdown-grace', '120'] });
    const exit = exited(served.child);
    const { response } = await rendering(served, LONG_VIDEO, { prefer: 'respond-async' });
    const accepted = await response;
    expect(accepted.status).toBe(202);
    const id = String(accepted.body.result.id);
    served.child.kill('SIGTERM');
    expect(await exit).toBe(null);
    expect(served.child.exitCode).toBe(0);
    // Not waited for (no request holds it), not failed: left open for a node to take up.
    const [row] = rows(`SELECT status FROM generations WHERE id = '${id}'`) as Array<{ status: string }>;
    expect(row?.status).toBeDefined();
    expect(['succeeded', 'failed', 'canceled']).not.toContain(row?.status);
    expect(rows('SELECT count(*) AS n FROM media')).toEqual([{ n: 0 }]);

    const again = await serveProcess(dataDir, { args: ['--shutdown-grace', '0'] });
    const log = readFileSync(logFilePath(dataDir, 'service'), 'utf8');
    expect(log).toContain('resuming 1 asynchronous generation');
    again.child.kill('SIGTERM');
    await exited(again.child);
    expect(again.child.exitCode).toBe(0);
  });
});
