import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffprobePath, probe, runProcess } from '../../../../../shared/node/ffmpeg.ts';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { AdapterSettings, ProviderTask, SubmittedJob } from '../../../../../server/providers/remote/contract.ts';
import { fetchOutput, outputsMayBePrivate } from '../../../../../server/providers/remote/download.ts';
import type { DownloadPolicy } from '../../../../../server/providers/remote/download.ts';
import { runRemoteJob } from '../../../../../server/providers/remote/runner.ts';
import type { RemoteJobRun, RunnerOptions } from '../../../../../server/providers/remote/runner.ts';
import { WebhookHub } from '../../../../../server/providers/remote/webhooks.ts';
import { acmeAdapter } from '../../../../support/remote/acme-adapter.ts';
import { acmeSignature, startAcmeFake } from '../../../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../../../support/remote/media.ts';
import type { SampleMedia } from '../../../../support/remote/media.ts';

const FAST: RunnerOptions = {
  pollInitialMs: 5,
  pollMaxMs: 20,
  pollFactor: 2,
  jitter: 0.2,
  webhookPollMs: 60_000,
  timeoutMs: 60_000,
  maxPollErrors: 3,
  requestTimeoutMs: 5_000,
};

let media: SampleMedia;
let fake: AcmeFake;
let dir: string;
const adapter = acmeAdapter('luma', 'Acme');

beforeAll(async () => {
  media = await sampleMedia();
});
beforeEach(async () => {
  fake = await startAcmeFake();
  fake.files.set('clip.mp4', { body: media.mp4 });
  fake.files.set('still.png', { body: media.png });
  fake.files.set('page.html', { body: Buffer.from('<!doctype html><html><body>not a video</body></html>') });
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-runner-'));
});
afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

function settings(): AdapterSettings {
  return { apiKey: fake.key, baseUrl: fake.baseUrl };
}

function task(): ProviderTask {
  return {
    kind: 'video',
    path: 'acme/video',
    modelId: 'acme/video:1',
    prompt: 'a lighthouse at dusk',
    size: '720p',
    width: 1280,
    height: 720,
    aspectRatio: '16:9',
    durationSeconds: 2,
    count: 1,
    parameters: {},
    signal: new AbortController().signal,
  };
}

function policy(overrides: Partial<DownloadPolicy> = {}): DownloadPolicy {
  return {
    maxBytes: 100_000_000,
    stallMs: 300,
    attempts: 3,
    allowPrivate: outputsMayBePrivate(fake.baseUrl),
    lookup: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    ...overrides,
  };
}

function run(overrides: Partial<RemoteJobRun> = {}): ReturnType<typeof runRemoteJob> {
  return runRemoteJob({
    adapter,
    settings: settings(),
    kind: 'video',
    count: 1,
    task: task(),
    deadline: Date.now() + 60_000,
    workDir: dir,
    signal: new AbortController().signal,
    download: policy(),
    options: FAST,
    ...overrides,
  });
}

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('runRemoteJob', () => {
  it('submits, persists the job before waiting, polls to success and fetches a real MP4 with its audio', async () => {
    fake.plan = { polls: 3, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.42 };
    const persisted: SubmittedJob[] = [];
    const result = await run({
      submitted: (job) => {
        // Persisted before any poll was made.
        expect(fake.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/jobs/'))).toHaveLength(0);
        persisted.push(job);
      },
    });
    expect(persisted.map((j) => j.id)).toEqual(['job_1']);
    expect(result.polls).toBe(4);
    expect(result.cost).toBe(0.42);
    expect(result.masters).toHaveLength(1);
    expect(result.masters[0]?.mime).toBe('video/mp4');
    const facts = await probe(result.masters[0]?.path ?? '');
    expect(facts.width).toBe(640);
    expect(facts.durationSeconds).toBeGreaterThan(0.5);
    // The master is the provider's file as it was: its soundtrack is there for the pipeline.
    const audio = await runProcess(
      ffprobePath(),
      [
        '-v',
        'error',
        '-select_streams',
        'a',
        '-show_entries',
        'stream=codec_name',
        '-of',
        'csv=p=0',
        result.masters[0]?.path ?? '',
      ],
      { keepStdout: true },
    );
    expect(audio.stdout.toString().trim()).toBe('aac');
    expect(fake.submissions()).toBe(1);
  });

  it('resumes a persisted job by polling it, without submitting again', async () => {
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    const submitted = await adapter.submit(settings(), task());
    const result = await run({ task: undefined, job: submitted });
    expect(fake.submissions()).toBe(1);
    expect(result.masters).toHaveLength(1);
  });

  it("honours the provider's Retry-After between polls", async () => {
    fake.plan = { polls: 1, outcome: 'succeed', outputs: ['clip.mp4'], retryAfter: 1 };
    const started = Date.now();
    const polls: number[] = [];
    const original = adapter.poll.bind(adapter);
    await run({
      adapter: {
        ...adapter,
        poll: (s, j, sig) => {
          polls.push(Date.now() - started);
          return original(s, j, sig);
        },
      },
    });
    // The first poll asked to wait a second: the next came no sooner (a fast schedule would poll within ms).
    expect(polls).toHaveLength(2);
    expect((polls[1] ?? 0) - (polls[0] ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('polls through a 5xx and succeeds', async () => {
    fake.pollFailures = [503];
    const result = await run();
    expect(result.masters).toHaveLength(1);
  });

  it('gives up after too many 5xx polls in a row, with class server', async () => {
    fake.pollFailures = [500, 500, 500, 500];
    const error = await rejection(run());
    expect(error.errorClass).toBe('server');
  });

  it('refuses an output URL that redirects more than 5 times, and follows 5', async () => {
    fake.files.set('clip.mp4', { body: media.mp4, redirects: 5 });
    expect((await run()).masters).toHaveLength(1);
    fake.files.set('clip.mp4', { body: media.mp4, redirects: 6 });
    const error = await rejection(run());
    expect(error.errorClass).toBe('malformed');
    expect(error.message).toMatch(/redirects more than 5 times/);
  });

  it('gives up on an output that stalls, and leaves no partial file', async () => {
    fake.files.set('clip.mp4', { body: media.mp4, stall: true });
    const error = await rejection(run());
    expect(error.errorClass).toBe('failed');
    expect(error.message).toMatch(/no data for 300 ms/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('resumes a cut download with Range and gets the whole file', async () => {
    fake.files.set('clip.mp4', { body: media.mp4, cutTimes: 1 });
    const result = await run();
    const ranges = fake.requests.filter((r) => r.path === '/files/clip.mp4').map((r) => r.headers['range'] ?? null);
    expect(ranges[0]).toBeNull();
    expect(ranges[1]).toMatch(/^bytes=\d+-$/);
    expect(Number(/\d+/.exec(ranges[1] ?? '')?.[0])).toBeGreaterThan(0);
    const facts = await probe(result.masters[0]?.path ?? '');
    expect(facts.durationSeconds).toBeGreaterThan(0.5);
  });

  it('refuses an output that is not a video', async () => {
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['page.html'] };
    const error = await rejection(run());
    expect(error.errorClass).toBe('malformed');
    expect(error.message).toMatch(/not a video/);
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['still.png'] };
    expect((await rejection(run())).message).toMatch(/not a video \(image\/png\)/);
  });

  it('refuses an output larger than the limit', async () => {
    const error = await rejection(run({ download: policy({ maxBytes: 1000 }) }));
    expect(error.errorClass).toBe('malformed');
    expect(error.message).toMatch(/larger than 1000 bytes/);
  });

  it('treats a success with no output as malformed', async () => {
    fake.plan = { polls: 0, outcome: 'no_output', outputs: [] };
    const error = await rejection(run());
    expect(error.errorClass).toBe('malformed');
    expect(error.message).toMatch(/no output/);
  });

  it('passes on the failure and the content-policy refusal the provider reports', async () => {
    fake.plan = { polls: 0, outcome: 'fail', outputs: [] };
    expect((await rejection(run())).errorClass).toBe('failed');
    fake.plan = { polls: 0, outcome: 'content_policy', outputs: [] };
    expect((await rejection(run())).errorClass).toBe('content_policy');
  });

  it('cancels the job at the provider when it times out', async () => {
    fake.plan = { polls: 0, outcome: 'never', outputs: [] };
    const error = await rejection(run({ deadline: Date.now() + 100, options: { ...FAST, timeoutMs: 100 } }));
    expect(error.errorClass).toBe('timeout');
    expect(fake.cancels()).toBe(1);
    expect(fake.jobs.get('job_1')?.canceled).toBe(true);
  });

  it('stops waiting on shutdown without canceling at the provider', async () => {
    fake.plan = { polls: 0, outcome: 'never', outputs: [] };
    const shutdown = new AbortController();
    const waiting = run({ signal: shutdown.signal });
    setTimeout(() => shutdown.abort(), 50);
    await expect(waiting).rejects.toThrow();
    expect(fake.cancels()).toBe(0);
  });

  it('is woken by a webhook instead of its (slow) safety poll', async () => {
    const hub = new WebhookHub();
    fake.plan = { polls: 100, outcome: 'succeed', outputs: ['clip.mp4'] };
    let jobId = '';
    const waiting = run({
      settings: { ...settings(), webhookUrl: 'http://127.0.0.1:9/v1/provider-webhooks/luma' },
      webhooks: hub,
      submitted: (job) => (jobId = job.id),
    });
    await new Promise((r) => setTimeout(r, 50));
    // The body carries the status and the outputs: no poll is needed at all.
    const body = JSON.stringify({ id: jobId, status: 'succeeded', outputs: [`${fake.baseUrl}/files/clip.mp4`] });
    const delivery = await adapter.webhook?.(settings(), {
      headers: { 'x-acme-signature': acmeSignature(fake.key, body) },
      body: Buffer.from(body),
    });
    expect(delivery?.jobId).toBe(jobId);
    expect(hub.deliver('luma', jobId, delivery?.status)).toBe(true);
    const result = await waiting;
    expect(result.polls).toBe(0);
    expect(result.masters).toHaveLength(1);
    // A forged delivery (wrong signature) is not the provider's.
    expect(
      await adapter.webhook?.(settings(), { headers: { 'x-acme-signature': 'x' }, body: Buffer.from(body) }),
    ).toBeUndefined();
  });
});

describe('inline outputs', () => {
  it('writes an inline image and checks it like a download', async () => {
    const signal = new AbortController().signal;
    const image = await fetchOutput(
      'openai',
      { data: media.png, mime: 'image/png' },
      'image',
      dir,
      0,
      policy(),
      signal,
    );
    // What ffprobe read comes along, so the pipeline does not probe the master again.
    expect(image).toMatchObject({
      path: join(dir, 'output-0.png'),
      mime: 'image/png',
      probed: { videoCodec: 'png', width: 640, height: 360 },
    });
    const notImage = fetchOutput(
      'openai',
      { data: Buffer.from('{"error":1}'), mime: 'image/png' },
      'image',
      dir,
      1,
      policy(),
      signal,
    );
    expect((await rejection(notImage)).message).toMatch(
      /openai returned an output that is not an image \(unrecognised content\)/,
    );
  });
});

describe('output addresses', () => {
  it('refuses private output URLs unless the base URL was overridden to a private address', async () => {
    expect(outputsMayBePrivate(undefined)).toBe(false);
    expect(outputsMayBePrivate('https://api.example.com')).toBe(false);
    expect(outputsMayBePrivate('http://127.0.0.1:9000')).toBe(true);
    expect(outputsMayBePrivate('http://10.1.2.3')).toBe(true);
    const error = await rejection(run({ download: policy({ allowPrivate: false }) }));
    expect(error.errorClass).toBe('malformed');
    expect(error.message).toMatch(/private address/);
  });
});
