import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegDescendants, isRunning, waitUntil } from '../../support/processes.ts';
import { logFilePath } from '../../../shared/node/log-path.ts';
import { serveProcess } from '../../support/service-process.ts';
import { clientFor, onPostgres } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
/** The longest render the catalog allows, so that the service is surely rendering when signalled. */
const LONG_VIDEO = {
  model: 'clipdesk/drift',
  duration: 10,
  size: '1080p',
  prompt: 'a long slow pan over a city at night',
};

let dataDir: string;
let key: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-signals-'));
  const created = spawn(process.execPath, [BIN, 'keys', 'create', '--user', 'sig', '--tier', 'pro', '--data', dataDir]);
  let out = '';
  created.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => created.once('close', r));
  key = out.trim();
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

// A grace of 1 s rather than the default 20: the request in flight is the long render, which the
// grace would otherwise let run on for 20 s before the stop aborts it (the grace itself is
// graceful-shutdown.test.ts's subject).
const serve = () => serveProcess(dataDir, { args: ['--shutdown-grace', '1'] });

async function renderingService(): Promise<{ child: ChildProcess; ffmpeg: number; exit: Promise<number | null> }> {
  const { child, url } = await serve();
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  void clientFor(url, key)
    .call('POST', '/videos/generations', LONG_VIDEO)
    .catch(() => undefined);
  let found: number[] = [];
  // Signalled as soon as the render's ffmpeg is seen, whatever it is doing: the run registers
  // itself with the service's reaper before it execs ffmpeg (shared/node/ffmpeg/watchdog.ts), so
  // there is no instant in which a kill leaves it behind.
  expect(await waitUntil(() => (found = ffmpegDescendants(child.pid!)).length > 0, 20_000)).toBe(true);
  return { child, ffmpeg: found[0]!, exit };
}

// The PostgreSQL pass (helpers.ts, TEST_DATABASE) skips this file: it runs `clipdesk-service` processes on a data directory's SQLite file.
describe.skipIf(process.platform !== 'linux' || onPostgres)('clipdesk-service and its ffmpeg children', () => {
  it('SIGKILL during a render: the render ffmpeg dies with the service', async () => {
    const { child, ffmpeg, exit } = await renderingService();
    child.kill('SIGKILL');
    await exit;
    // Within 2 s of the kill, on a loaded machine too: the reaper acts on its pipe's end of file.
    const gone = await waitUntil(() => !isRunning(ffmpeg), 2_000);
    if (!gone) process.kill(ffmpeg, 'SIGKILL');
    expect(gone).toBe(true);
  });

  it('SIGTERM during a render: the service stops its work, waits for it, and exits 0', async () => {
    const { child, ffmpeg, exit } = await renderingService();
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    // close() waited for the aborted render, so its ffmpeg was already gone when the process exited.
    expect(isRunning(ffmpeg)).toBe(false);
    // The service's log file says so, and holds no key.
    const log = readFileSync(logFilePath(dataDir, 'service'), 'utf8');
    expect(log).toContain('"msg":"stopped"');
    expect(log).not.toContain(key.slice(22));
  });
});
