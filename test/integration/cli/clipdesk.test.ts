// The `clipdesk` command as a user runs it: a child process, its stdout, stderr and exit code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../../shared/clock.ts';
import { probe } from '../../../shared/node/ffmpeg.ts';
import { startService } from '../../../server/index.ts';
import type { RunningService } from '../../../server/index.ts';

const bin = fileURLToPath(new URL('../../../bin/clipdesk.js', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Async, so a service in this process can answer while the CLI runs. */
function run(
  args: string[],
  env: Record<string, string> = {},
  input = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  // No session bus: the keychain is 'none', as on a fresh headless machine.
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOME: dir, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
  child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

describe('clipdesk on the embedded Local engine', () => {
  it('generate video writes an MP4 that plays; stdout has only the path', async () => {
    const out = join(dir, 'out');
    const res = await run([
      '--data',
      join(dir, 'data'),
      'generate',
      'video',
      '--prompt',
      'a red fox in the snow',
      '--duration',
      '2',
      '--size',
      '360p',
      '--out',
      out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const path = lines[0]!;
    expect(path.startsWith(out)).toBe(true);
    expect(path).toMatch(/\/\d{4}-\d{2}\/clipdesk_motion\/[^/]+-med_[^/]+\.mp4$/);
    expect(res.stderr).toMatch(/Generating video/);
    const facts = await probe(path);
    expect(facts).toMatchObject({ hasVideo: true, videoCodec: 'h264', width: 640, height: 360 });
    expect(facts.durationSeconds).toBeGreaterThan(1.5);
    const sidecar = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
    expect(sidecar).toMatchObject({ prompt: 'a red fox in the snow', model: 'clipdesk/motion', routing: 'optimal' });
    expect(sidecar.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(`${path}.json`, 'utf8')).not.toMatch(/sk-|Bearer/);
  });

  it('--json prints one JSON object; media list sees the item', async () => {
    const res = await run([
      '--data',
      join(dir, 'data'),
      'generate',
      'image',
      '--prompt',
      'a blue square',
      '--size',
      '256x256',
      '--out',
      join(dir, 'img'),
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const parsed = JSON.parse(res.stdout) as { items: Array<{ path: string }> };
    expect(parsed.items).toHaveLength(1);
    expect(existsSync(parsed.items[0]!.path)).toBe(true);
    const list = await run(['--data', join(dir, 'data'), 'media', 'list', '--user', 'me', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).total).toBe(2);
  });

  it('exit codes: 2 usage, 3 authentication, 5 service error', async () => {
    expect((await run(['generate', 'video'])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
    expect((await run(['models', '--prompt', 'x'])).code).toBe(2);
    const bad = await run(['--data', join(dir, 'data'), 'models'], { CLIPDESK_API_KEY: 'sk-wrong' });
    expect(bad.code).toBe(3);
    expect(bad.stderr.trim()).toBe('clipdesk: Invalid API key');
    expect(bad.stdout).toBe('');
    const missing = await run(['--data', join(dir, 'data'), 'media', 'download', 'med_nope']);
    expect(missing.code).toBe(5);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('clipdesk against a remote service', () => {
  let service: RunningService;
  beforeAll(async () => {
    // Rate windows are fixed minutes: on the wall clock, the dozen CLI runs below could straddle
    // a minute's end and start a fresh window. The service's time stands still at the start of
    // the current minute instead (close to the CLI's own clock, which reads the reset times).
    const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000);
    service = await startService({ dataDir: join(dir, 'remote'), sweepIntervalMs: 0, clock });
  });
  afterAll(async () => {
    await service.close();
  });

  it('uses CLIPDESK_API_KEY, reports 4 when rate-limited, and login refuses to pretend without a keychain', async () => {
    const { key } = await service.createKey({ user: 'frank', tier: 'free' });
    const ok = await run(['--base-url', service.url, 'usage'], { CLIPDESK_API_KEY: key });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^tier\tfree/m);
    const login = await run(['--data', join(dir, 'data'), 'login', '--base-url', service.url], {}, `${key}\n`);
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/No OS keychain is available/);
    await service.setTier('frank', 'free');
    // Spend the window; with no 429 retries allowed, the next call reports the limit.
    let last = ok;
    for (let i = 0; i < 12 && last.code === 0; i++)
      last = await run(['--base-url', service.url, 'providers'], {
        CLIPDESK_API_KEY: key,
        CLIPDESK_RATE_LIMIT_RETRIES: '0',
      });
    expect(last.code).toBe(4);
    expect(last.stderr).toMatch(/^clipdesk: .*retry after \d+ s\)\n$/);
  });
});
