// `clipdesk` with asynchronous generations (issue 13), as a user runs it (a child process),
// against a loopback stand-in for a service version with async mode (test/support/async-standin.ts;
// the service's own implementation is built on another branch).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STANDIN_KEY, startAsyncStandin } from '../../support/async-standin.ts';
import type { Standin, StandinOptions } from '../../support/async-standin.ts';
import { runCli } from './run-cli.ts';

let dir: string;
let standin: Standin | null = null;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-cli-async-'));
});
afterEach(async () => {
  await standin?.close();
  standin = null;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function serve(options: StandinOptions = {}): Promise<Standin> {
  standin = await startAsyncStandin(options);
  return standin;
}

const run = (s: Standin, args: string[]) =>
  runCli(dir, ['--base-url', s.baseUrl, '--data', join(dir, 'data'), ...args], {
    CLIPDESK_API_KEY: STANDIN_KEY,
    CLIPDESK_POLL_INTERVAL_MS: '10',
  });

describe('clipdesk generations', () => {
  it('generate video --async prints only the generation id and exits; get shows it; wait follows it with progress', async () => {
    const s = await serve({ queue: [2, 1] });
    const submitted = await run(s, [
      'generate',
      'video',
      '--model',
      'clipdesk/motion',
      '--prompt',
      'a slow fox',
      '--async',
    ]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^gen_\d+$/);
    expect(s.posts()).toHaveLength(1);
    expect(s.posts()[0]).toMatchObject({ path: '/v1/videos/generations', headers: { prefer: 'respond-async' } });
    expect(s.requests.filter((r) => r.path.startsWith('/v1/generations/'))).toHaveLength(0);

    const got = await run(s, ['generations', 'get', id]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toBe(`${id} queued · queue position 2\n`);

    const waited = await run(s, ['generations', 'wait', id]);
    expect(waited.code, waited.stderr).toBe(0);
    const lines = waited.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${id} succeeded`);
    expect(lines[1]).toMatch(/^med_\d+ http:\/\/127\.0\.0\.1:\d+\/files\/med_\d+\.mp4$/);
    // stderr: the step, the elapsed time, the queue position.
    expect(waited.stderr).toMatch(new RegExp(`^${id}: Queued · \\d+ s · queue position 1$`, 'm'));
    for (const step of ['Generating', 'Transcoding', 'Thumbnail', 'Storing', 'Succeeded']) {
      expect(waited.stderr).toMatch(new RegExp(`^${id}: ${step} · \\d+ s$`, 'm'));
    }
    expect(s.posts()).toHaveLength(1);

    const json = await run(s, ['generations', 'get', id, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, object: 'generation', status: 'succeeded' });
  });

  it('generations cancel sends DELETE; a wait on a canceled generation fails with exit 5', async () => {
    const s = await serve({ generatingPolls: 1000 });
    const { stdout } = await run(s, [
      'generate',
      'video',
      '--model',
      'clipdesk/motion',
      '--prompt',
      'never mind',
      '--async',
    ]);
    const id = stdout.trim();
    const canceled = await run(s, ['generations', 'cancel', id]);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout).toBe(`${id} canceled\n`);
    expect(s.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([`/v1/generations/${id}`]);
    const waited = await run(s, ['generations', 'wait', id]);
    expect(waited.code).toBe(5);
    expect(waited.stderr).toMatch(new RegExp(`clipdesk: Generation ${id} was canceled`));
  });

  it('generate without --async follows the 202 to the saved file, with the steps on stderr', async () => {
    const s = await serve({ queue: [1] });
    const out = join(dir, 'followed');
    const res = await run(s, [
      'generate',
      'video',
      '--model',
      'clipdesk/motion',
      '--prompt',
      'follow me',
      '--out',
      out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim().startsWith(out)).toBe(true);
    expect(res.stderr).toMatch(/^Accepted as gen_\d+$/m);
    expect(res.stderr).toMatch(/^Generating video: Queued · \d+ s · queue position 1$/m);
    expect(res.stderr).toMatch(/^Generating video: Transcoding · \d+ s$/m);
    expect(s.posts()).toHaveLength(1);
  });

  it('a 429 while waiting says what it waits for and how long', async () => {
    const s = await serve({ rateLimitPolls: 1 });
    const { stdout } = await run(s, ['generate', 'video', '--model', 'clipdesk/motion', '--prompt', 'busy', '--async']);
    const id = stdout.trim();
    const waited = await run(s, ['generations', 'wait', id]);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stderr).toMatch(
      new RegExp(
        `^${id}: rate limited \\(429: Too many requests\\); waiting \\d+ s before GET /generations/${id}$`,
        'm',
      ),
    );
  });

  it('an unknown id is exit 5 with the service’s message; list filters by status; bad input is a usage error', async () => {
    const s = await serve();
    const missing = await run(s, ['generations', 'get', 'gen_nope']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/No such generation/);
    const { stdout } = await run(s, [
      'generate',
      'video',
      '--model',
      'clipdesk/motion',
      '--prompt',
      'listed',
      '--async',
    ]);
    const list = await run(s, ['generations', 'list', '--status', 'queued']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${stdout.trim()} queued videos.generations `));
    expect((await run(s, ['generations', 'list', '--status', 'sleeping'])).code).toBe(2);
    expect((await run(s, ['generations', 'wait'])).code).toBe(2);
  });

  it('generate --async against a service without async mode takes its 200 answer as before: saved, no polling', async () => {
    const s = await serve({ async: false });
    const out = join(dir, 'o');
    const res = await run(s, [
      'generate',
      'video',
      '--model',
      'clipdesk/motion',
      '--prompt',
      'old service',
      '--async',
      '--out',
      out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/no asynchronous mode/);
    expect(res.stdout.trim().startsWith(out)).toBe(true);
    expect(s.requests.filter((r) => r.path.startsWith('/v1/generations'))).toHaveLength(0);
    expect(s.posts()).toHaveLength(1);
  });
});
