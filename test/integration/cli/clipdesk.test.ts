// The `clipdesk` command as a user runs it: a child process, its stdout, stderr and exit code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ManualClock } from '../../../shared/clock.ts';
import { ffmpegPath, probe } from '../../../shared/node/ffmpeg.ts';
import { startService } from '../../../server/index.ts';
import type { RunningService } from '../../../server/index.ts';
import { runCli } from './run-cli.ts';
import type { CliRun } from './run-cli.ts';

/** A URL of the embedded engine: dead once the command that printed it has exited. */
const LOOPBACK_URL = /https?:\/\/(127\.0\.0\.1|localhost|\[::1\])/;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}, input = ''): Promise<CliRun> {
  return runCli(dir, args, env, input);
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
    // --out DIR means DIR: the file itself, no dated folders (those are opt-in: --library-layout).
    expect(dirname(path)).toBe(out);
    expect(basename(path)).toMatch(/^[^/]+-med_[^/]+\.mp4$/);
    expect(res.stderr).toMatch(/Generating video/);
    const facts = await probe(path);
    expect(facts).toMatchObject({ hasVideo: true, videoCodec: 'h264', width: 640, height: 360 });
    expect(facts.durationSeconds).toBeGreaterThan(1.5);
    const sidecar = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
    expect(sidecar).toMatchObject({ prompt: 'a red fox in the snow', model: 'clipdesk/motion', routing: 'optimal' });
    expect(sidecar.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(`${path}.json`, 'utf8')).not.toMatch(/cdsk_[0-9a-f]{16}_|Bearer/);
    // Looked up from /models and /providers: the generated item carries neither.
    expect(sidecar.modelSlug).toMatch(/^clipdesk\/motion:\d/);
    expect(typeof sidecar.providerName).toBe('string');
    // The engine's port closed with the run: the sidecar names the item, not a dead URL.
    expect(sidecar.url).toBe(`clipdesk-media:${sidecar.id}`);
    expect(sidecar.engineDataDir).toBe(join(dir, 'data', 'engine'));
    expect(readFileSync(`${path}.json`, 'utf8')).not.toMatch(LOOPBACK_URL);
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
    const parsed = JSON.parse(res.stdout) as { items: Array<{ id: string; path: string; item: { url: string } }> };
    expect(parsed.items).toHaveLength(1);
    expect(existsSync(parsed.items[0]!.path)).toBe(true);
    expect(parsed.items[0]!.item.url).toBe(`clipdesk-media:${parsed.items[0]!.id}`);
    expect(res.stdout).not.toMatch(LOOPBACK_URL);
    const list = await run(['--data', join(dir, 'data'), 'media', 'list', '--user', 'me', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).total).toBe(2);
    expect(list.stdout).not.toMatch(LOOPBACK_URL);
  });

  it('upload prints the media id, which generate --image and media download take', async () => {
    const png = join(dir, 'frame.png');
    execFileSync(ffmpegPath(), ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x64', '-frames:v', '1', png]);
    const up = await run(['--data', join(dir, 'data'), 'upload', png]);
    expect(up.code, up.stderr).toBe(0);
    const id = up.stdout.trim();
    expect(id).toMatch(/^med_[0-9a-f]+$/);
    const upJson = await run(['--data', join(dir, 'data'), 'upload', png, '--json']);
    expect(upJson.code, upJson.stderr).toBe(0);
    const uploaded = JSON.parse(upJson.stdout) as { id: string; url: string; deduplicated: boolean };
    // The same bytes to the same engine, though it listens on another port this run.
    expect(uploaded).toMatchObject({ id, deduplicated: true });
    expect(uploaded.url).toBe(`clipdesk-media:${uploaded.id}`);
    expect(upJson.stdout).not.toMatch(LOOPBACK_URL);

    const out = join(dir, 'from-id');
    const gen = await run([
      '--data',
      join(dir, 'data'),
      'generate',
      'video',
      '--prompt',
      'the red frame, slowly',
      '--image',
      id,
      '--duration',
      '2',
      '--size',
      '360p',
      '--out',
      out,
    ]);
    expect(gen.code, gen.stderr).toBe(0);
    const path = gen.stdout.trim();
    const sidecar = JSON.parse(readFileSync(`${path}.json`, 'utf8'));
    expect(sidecar.sourceImage).toBe(`clipdesk-media:${id}`);

    const again = await run([
      '--data',
      join(dir, 'data'),
      'media',
      'download',
      `clipdesk-media:${sidecar.id}`,
      '--out',
      join(dir, 'again'),
      '--library-layout',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(again.stdout.trim())).toBe(true);
    // The app's library layout under DIR, asked for.
    expect(again.stdout.trim()).toMatch(/\/again\/\d{4}-\d{2}\/clipdesk_motion\/[^/]+-med_[^/]+\.mp4$/);
  });

  it("invalid input exits 2 naming the model's bounds, before anything is submitted", async () => {
    const gen = (...args: string[]) =>
      run(['--data', join(dir, 'data'), 'generate', 'video', '--prompt', 'x', '--out', join(dir, 'no'), ...args]);
    const long = await gen('--duration', '20');
    expect(long.code).toBe(2);
    expect(long.stderr.trim()).toBe('clipdesk: duration must be 2–8 s for clipdesk/motion');
    const size = await gen('--size', '4k');
    expect(size.code).toBe(2);
    expect(size.stderr.trim()).toBe('clipdesk: size must be one of 360p, 480p, 720p, 1080p for clipdesk/motion');
    const style = await gen('--style', 'neon');
    expect(style.code).toBe(2);
    expect(style.stderr.trim()).toBe('clipdesk: clipdesk/motion takes no --style');
    const model = await gen('--model', 'clipdesk/nope');
    expect(model.code).toBe(2);
    const prompt = await run(['--data', join(dir, 'data'), 'generate', 'video', '--prompt', 'x'.repeat(501)]);
    expect(prompt.code).toBe(2);
    expect(prompt.stderr.trim()).toBe('clipdesk: --prompt must be at most 500 characters');
    const image = await gen('--image', 'med_doesnotexist');
    expect(image.code).toBe(2);
    expect(image.stderr).toMatch(/no such file or media item/);
    // The end frame: with a start frame, on a model that takes one, resolved as --image is.
    const start = ['--image', 'https://media.example/start.png'];
    const endAlone = await gen('--end-image', 'https://media.example/end.png');
    expect(endAlone.stderr.trim()).toBe('clipdesk: --end-image needs --image: an end frame needs a start frame');
    const endOnMotion = await gen(...start, '--end-image', 'https://media.example/end.png');
    expect(endOnMotion.stderr.trim()).toBe('clipdesk: clipdesk/motion takes no end frame (--end-image)');
    const endMissing = await gen('--model', 'minimax/hailuo-02', ...start, '--end-image', 'med_doesnotexist');
    expect(endMissing.stderr.trim()).toBe('clipdesk: --end-image: no such file or media item: med_doesnotexist');
    expect([endAlone.code, endOnMotion.code, endMissing.code]).toEqual([2, 2, 2]);
    expect(existsSync(join(dir, 'no'))).toBe(false);
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
    // The wait is said once, in the service's words.
    expect(last.stderr).toMatch(/^clipdesk: .*Retry after \d+ seconds?\.\n$/);
    expect(last.stderr.match(/retry after/gi)).toHaveLength(1);
  });
});
