// `clipdesk` with asynchronous generations (docs/workflows.md), as a user runs it (a child process), against
// the real Local engine on loopback. Generations run at "Acme", the made-up provider's loopback fake
// (test/support/remote), whose queue position the test holds and releases, so a generation is still
// queued or running while the CLI looks at it. What happened is read from the service's records and
// Acme's jobs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GENERATION_STATUSES } from '../../../shared/api/index.ts';
import type { Generation } from '../../../shared/api/index.ts';
import { ManualClock } from '../../../shared/clock.ts';
import { olderService, pollThrottlingProxy } from '../../support/other-services.ts';
import { acmeProvider } from '../../support/remote/acme-adapter.ts';
import { startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import type { SampleMedia } from '../../support/remote/media.ts';
import { startTestService } from '../server/helpers.ts';
import type { TestClient, TestService } from '../server/helpers.ts';
import { runCli } from './run-cli.ts';

let dir: string;
let media: SampleMedia;
let t: TestService | undefined;
let fake: AcmeFake | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-cli-async-'));
  media = await sampleMedia();
});
afterEach(async () => {
  await t?.stop();
  await fake?.close();
  t = undefined;
  fake = undefined;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The queue position Acme reports: held at `positions[0]` while `held`, else one per poll. */
interface AcmeQueue {
  positions: number[];
  held: boolean;
}

interface Served {
  t: TestService;
  fake: AcmeFake;
  c: TestClient;
  queue: AcmeQueue;
}

/**
 * The real service with Acme registered and an enterprise user. The service's clock stands still one
 * second before a minute ends, so a rate-limit refusal says "Retry-After: 1" and the test moves the
 * clock into the next minute when the CLI announces its wait.
 */
async function serve(queue: AcmeQueue = { positions: [], held: false }): Promise<Served> {
  const acme = await startAcmeFake();
  fake = acme;
  acme.files.set('clip.mp4', { body: media.mp4 });
  acme.plan = { polls: 2, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.01 };
  const made = acmeProvider({
    models: [{ model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p'] }],
  });
  // Acme's API has no queue positions; this adapter adds them, as Runway's and Luma's report theirs.
  // While the job waits in that queue, Acme has not started it (its own polls begin after).
  const poll: typeof made.adapter.poll = (settings, job, signal) => {
    const position = queue.positions[0];
    if (position === undefined) return made.adapter.poll(settings, job, signal);
    if (!queue.held) queue.positions.shift();
    return Promise.resolve({ status: 'queued', position });
  };
  const service = await startTestService({
    clock: new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 59)),
    remoteProviders: [{ ...made, adapter: { ...made.adapter, poll } }],
    providerKeys: { luma: acme.key },
    providerBaseUrls: { luma: acme.baseUrl },
    remoteTimings: { pollInitialMs: 100, pollMaxMs: 100, jitter: 0, stallMs: 2_000, requestTimeoutMs: 5_000 },
  });
  t = service;
  return { t: service, fake: acme, c: await service.client('ada', 'enterprise'), queue };
}

const run = (s: Served, args: string[], onStderr?: (stderr: string) => void, baseUrl = s.t.service.url) =>
  runCli(
    dir,
    ['--base-url', baseUrl, '--data', join(dir, 'data'), ...args],
    { CLIPDESK_API_KEY: s.c.key, CLIPDESK_POLL_INTERVAL_MS: '10' },
    '',
    onStderr,
  );

const VIDEO = ['generate', 'video', '--model', 'clipdesk/motion', '--size', '360p', '--provider', 'acme'];

async function statusOf(s: Served, id: string): Promise<Generation> {
  return (await s.c.call('GET', `/generations/${id}`)).body.result as Generation;
}

/** The steps a progress display showed (`<label>: <Step> · …`), in order, each once. */
function steps(stderr: string, label: string): string[] {
  const shown = [...stderr.matchAll(new RegExp(`^${label}: (\\w+) · `, 'gm'))].map((m) => m[1]!.toLowerCase());
  const unique = shown.filter((step, i) => step !== shown[i - 1]);
  const order = unique.map((step) => GENERATION_STATUSES.indexOf(step as Generation['status']));
  expect(order).not.toContain(-1);
  expect(order).toEqual([...order].sort((a, b) => a - b));
  return unique;
}

describe('clipdesk generations', () => {
  it('generate video --async prints only the generation id and exits; get shows it; wait follows it with progress', async () => {
    const s = await serve({ positions: [2, 1], held: true });
    const submitted = await run(s, [...VIDEO, '--prompt', 'a slow fox', '--async']);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^gen_\w+$/);
    const listed = (await s.c.call('GET', '/generations')).body.result as { generations: Generation[] };
    expect(listed.generations.map((g) => g.id)).toEqual([id]);
    expect(s.fake.submissions()).toBeLessThanOrEqual(1);

    await expect.poll(async () => (await statusOf(s, id)).queuePosition).toBe(2);
    const got = await run(s, ['generations', 'get', id]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toBe(`${id} queued · queue position 2\n`);

    // Position 1 once the CLI is waiting; the provider goes on once the CLI has shown it.
    s.queue.positions.shift();
    const waited = await run(s, ['generations', 'wait', id], (stderr) => {
      if (/queue position 1$/m.test(stderr)) s.queue.held = false;
    });
    expect(waited.code, waited.stderr).toBe(0);
    const lines = waited.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${id} succeeded`);
    expect(lines[1]).toMatch(/^med_\w+ http:\/\/127\.0\.0\.1:\d+\/\S+$/);
    // stderr: the step, the elapsed time, the queue position.
    expect(waited.stderr).toMatch(new RegExp(`^${id}: Queued · \\d+ s · queue position 1$`, 'm'));
    expect(waited.stderr).toMatch(new RegExp(`^${id}: Generating · \\d+ s$`, 'm'));
    expect(waited.stderr).toMatch(new RegExp(`^${id}: Succeeded · \\d+ s$`, 'm'));
    expect(steps(waited.stderr, id)).toEqual(expect.arrayContaining(['queued', 'generating', 'succeeded']));
    expect(s.fake.submissions()).toBe(1);

    const json = await run(s, ['generations', 'get', id, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, object: 'generation', status: 'succeeded' });
  });

  it('generations cancel cancels on the service and at the provider; a wait on it fails with exit 5', async () => {
    const s = await serve();
    s.fake.plan = { ...s.fake.plan, outcome: 'never' };
    const { stdout } = await run(s, [...VIDEO, '--prompt', 'never mind', '--async']);
    const id = stdout.trim();
    await expect.poll(async () => (await statusOf(s, id)).status).toBe('generating');
    const canceled = await run(s, ['generations', 'cancel', id]);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout).toMatch(new RegExp(`^${id} canceled( · [^\n]*)?\n$`));
    expect((await statusOf(s, id)).status).toBe('canceled');
    await expect.poll(() => s.fake.cancels()).toBe(1);
    const waited = await run(s, ['generations', 'wait', id]);
    expect(waited.code).toBe(5);
    expect(waited.stderr).toMatch(new RegExp(`clipdesk: Generation ${id} was canceled`));
  });

  it('generate without --async follows the 202 to the saved file, with the steps on stderr', async () => {
    const s = await serve({ positions: [1], held: true });
    const out = join(dir, 'followed');
    const res = await run(s, [...VIDEO, '--prompt', 'follow me', '--out', out], (stderr) => {
      if (/queue position 1$/m.test(stderr)) s.queue.held = false;
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim().startsWith(out)).toBe(true);
    expect(res.stderr).toMatch(/^Accepted as gen_\w+$/m);
    expect(res.stderr).toMatch(/^Generating video: Queued · \d+ s · queue position 1$/m);
    expect(res.stderr).toMatch(/^Generating video: Generating · \d+ s$/m);
    expect(steps(res.stderr, 'Generating video')).toContain('generating');
    expect(s.fake.submissions()).toBe(1);
    expect((await s.c.call('GET', '/generations')).body.result.total).toBe(1);
  });

  it('a 429 while waiting says what it waits for and how long', async () => {
    const s = await serve({ positions: [1], held: true });
    const { stdout } = await run(s, [...VIDEO, '--prompt', 'busy', '--async']);
    const id = stdout.trim();
    // Our service never rate-limits polling; another v1 implementation may: a proxy answers the
    // first poll 429 with Retry-After: 1.
    const proxy = await pollThrottlingProxy(s.t.service.url);
    try {
      const waited = await run(
        s,
        ['generations', 'wait', id],
        (stderr) => {
          if (/rate limited/.test(stderr)) s.queue.held = false;
        },
        proxy.url,
      );
      expect(waited.code, waited.stderr).toBe(0);
      expect(proxy.throttled()).toBe(1);
      expect(waited.stderr).toMatch(
        new RegExp(`^${id}: rate limited \\(429: [^)]+\\); waiting 1 s before GET /generations/${id}$`, 'm'),
      );
    } finally {
      await proxy.close();
    }
  });

  it('an unknown id is exit 5 with the service’s message; list filters by status; bad input is a usage error', async () => {
    const s = await serve({ positions: [1], held: true });
    const missing = await run(s, ['generations', 'get', 'gen_nope']);
    expect(missing.code).toBe(5);
    const answer = await s.c.call('GET', '/generations/gen_nope');
    expect(missing.stderr).toContain(answer.body.error?.message ?? answer.body.message);
    const { stdout } = await run(s, [...VIDEO, '--prompt', 'listed', '--async']);
    await expect.poll(async () => (await statusOf(s, stdout.trim())).queuePosition).toBe(1);
    const list = await run(s, ['generations', 'list', '--status', 'queued']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${stdout.trim()} queued videos.generations `));
    expect((await run(s, ['generations', 'list', '--status', 'succeeded'])).stdout).toBe('');
    expect((await run(s, ['generations', 'list', '--status', 'sleeping'])).code).toBe(2);
    expect((await run(s, ['generations', 'wait'])).code).toBe(2);
  });

  it('generate --async against a service without async mode takes its 200 answer as before: saved, no polling', async () => {
    const s = await serve();
    const older = await olderService(s.t.service.url);
    try {
      const out = join(dir, 'o');
      const res = await run(s, [...VIDEO, '--prompt', 'old service', '--async', '--out', out], undefined, older.url);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toMatch(/no asynchronous mode/);
      expect(res.stdout.trim().startsWith(out)).toBe(true);
      expect(older.seen.filter((r) => r.path.startsWith('/generations'))).toEqual([]);
      expect(older.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
      expect((await s.c.call('GET', '/generations')).body.result.total).toBe(0);
    } finally {
      await older.close();
    }
  });
});
