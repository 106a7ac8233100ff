import { pollToEnd, providerError, providerTask } from './adapter-kit.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdapterSettings, ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { lumaAdapter } from '../../../../../server/providers/remote/luma.ts';
import { ffprobePath, runProcess } from '../../../../../shared/node/ffmpeg.ts';
import { startLoopback, startWebhookReceiver } from '../../../../fakes/providers/loopback.ts';
import { startLumaFake } from '../../../../fakes/providers/luma.ts';
import type { FakeOptions, RunningFake } from '../../../../fakes/providers/types.ts';

let fake: RunningFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(options: FakeOptions = {}): Promise<{ fake: RunningFake; settings: AdapterSettings }> {
  fake = await startLumaFake(options);
  return { fake, settings: { apiKey: fake.key, baseUrl: fake.baseUrl } };
}

const task = (overrides: Partial<ProviderTask> = {}): ProviderTask =>
  providerTask({ path: 'ray-2', modelId: 'luma/ray-2:2.0', prompt: 'a red fox running through snow', ...overrides });

const signal = (): AbortSignal => new AbortController().signal;

describe('lumaAdapter against the Luma contract fake', () => {
  it('submits text-to-video, polls queued → running → succeeded, and gives a downloadable MP4 with sound', async () => {
    const { fake, settings } = await start();
    const job = await lumaAdapter.submit(settings, task({ parameters: { loop: true } }));

    const create = fake.requests.find((r) => r.method === 'POST');
    expect(create?.path).toBe('/dream-machine/v1/generations/video');
    expect(create?.headers['authorization']).toBe(`Bearer ${fake.key}`);
    expect(create?.body).toEqual({
      model: 'ray-2',
      prompt: 'a red fox running through snow',
      resolution: '720p',
      duration: '5s',
      aspect_ratio: '16:9',
      loop: true,
    });

    const seen = (await pollToEnd(lumaAdapter, settings, job)).statuses;
    expect(seen.map((s) => s.status)).toEqual(['queued', 'running', 'succeeded']);
    const done = seen.at(-1);
    if (done?.status !== 'succeeded') throw new Error('not succeeded');
    expect(done.outputs).toHaveLength(1);
    const output = done.outputs[0];
    if (!output || !('url' in output)) throw new Error('no URL output');
    expect(output.headers).toBeUndefined();

    const res = await fetch(output.url);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const dir = await mkdtemp(join(tmpdir(), 'luma-test-'));
    try {
      await writeFile(join(dir, 'out.mp4'), bytes);
      const { stdout } = await runProcess(
        ffprobePath(),
        ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', join(dir, 'out.mp4')],
        { op: 'probe', timeoutMs: 30_000, keepStdout: true },
      );
      expect(stdout.toString().split('\n').filter(Boolean).sort()).toEqual(['aac', 'h264']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const ranged = await fetch(output.url, { headers: { range: 'bytes=10-19' } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(bytes.subarray(10, 20));

    // Polling and resuming never create a second generation.
    expect(fake.submissions()).toBe(1);
    expect(await lumaAdapter.poll(settings, job, signal())).toMatchObject({ status: 'succeeded' });
    expect(fake.submissions()).toBe(1);
  });

  it('maps sizes, durations and aspect ratios to Luma values, and ray-flash-2 by its path', async () => {
    const { fake, settings } = await start();
    await lumaAdapter.submit(
      settings,
      task({ path: 'ray-flash-2', size: '1080p', durationSeconds: 9, aspectRatio: '9:16', width: 1080, height: 1920 }),
    );
    expect(fake.requests.at(-1)?.body).toEqual({
      model: 'ray-flash-2',
      prompt: 'a red fox running through snow',
      resolution: '1080p',
      duration: '9s',
      aspect_ratio: '9:16',
    });
  });

  it('refuses what Luma cannot take before calling it', async () => {
    const { fake, settings } = await start();
    const cases: Array<Partial<ProviderTask>> = [
      { size: '360p' },
      { durationSeconds: 6 },
      { aspectRatio: '2:1' },
      { path: 'ray-1-6' },
      { kind: 'image' },
      { parameters: { loop: 'yes' } },
      { startImage: { path: '/tmp/x.png', mime: 'image/png', bytes: 10 } },
    ];
    for (const overrides of cases) {
      const err = await providerError(lumaAdapter.submit(settings, task(overrides)));
      expect(err.errorClass).toBe('invalid_input');
      expect(err.provider).toBe('luma');
      expect(err.message).toMatch(/^Luma/);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('passes Luma’s own input refusal on as invalid_input with its detail', async () => {
    const { settings } = await start();
    const err = await providerError(lumaAdapter.submit(settings, task({ prompt: 'ab' })));
    expect(err.errorClass).toBe('invalid_input');
    expect(err.status).toBe(400);
    expect(err.message).toContain('Prompt is too short');
  });

  it('reports a failed generation as failed, with Luma’s reason', async () => {
    const { settings } = await start({ scenario: 'fail' });
    const job = await lumaAdapter.submit(settings, task());
    const last = (await pollToEnd(lumaAdapter, settings, job)).last;
    if (last?.status !== 'failed') throw new Error(`expected failed, got ${last?.status}`);
    expect(last.error.errorClass).toBe('failed');
    expect(last.error.message).toContain('Job failed');
  });

  it('reports a moderation refusal as content_policy, with Luma’s reason', async () => {
    const { settings } = await start({ scenario: 'content_policy' });
    const job = await lumaAdapter.submit(settings, task());
    const last = (await pollToEnd(lumaAdapter, settings, job)).last;
    if (last?.status !== 'failed') throw new Error(`expected failed, got ${last?.status}`);
    expect(last.error.errorClass).toBe('content_policy');
    expect(last.error.message).toContain('Advanced prompt moderation failed');
  });

  it('reports a completed generation without a video as malformed', async () => {
    const { settings } = await start({ scenario: 'no_output' });
    const job = await lumaAdapter.submit(settings, task());
    const last = (await pollToEnd(lumaAdapter, settings, job)).last;
    if (last?.status !== 'failed') throw new Error(`expected failed, got ${last?.status}`);
    expect(last.error.errorClass).toBe('malformed');
  });

  it('reads a generation deleted at Luma as canceled', async () => {
    const { settings } = await start({ scenario: 'cancel' });
    const job = await lumaAdapter.submit(settings, task());
    const seen = (await pollToEnd(lumaAdapter, settings, job)).statuses;
    expect(seen.at(-1)).toEqual({ status: 'canceled' });
  });

  it('cancels by deleting the generation: a slow job ends, and a second cancel is harmless', async () => {
    const { fake, settings } = await start({ scenario: 'slow' });
    const job = await lumaAdapter.submit(settings, task());
    const seen = (await pollToEnd(lumaAdapter, settings, job, 8)).statuses;
    expect(seen.at(-1)?.status).toBe('running');

    await lumaAdapter.cancel(settings, job, signal());
    const del = fake.requests.find((r) => r.method === 'DELETE');
    expect(del?.path).toBe(`/dream-machine/v1/generations/${job.id}`);
    expect(del?.headers['authorization']).toBe(`Bearer ${fake.key}`);
    expect(await lumaAdapter.poll(settings, job, signal())).toEqual({ status: 'canceled' });
    await expect(lumaAdapter.cancel(settings, job, signal())).resolves.toBeUndefined();
  });

  it('classes a refused key as auth, without the key in the message', async () => {
    const { fake, settings } = await start({ scenario: 'unauthorized' });
    const err = await providerError(lumaAdapter.submit(settings, task()));
    expect(err.errorClass).toBe('auth');
    expect(err.status).toBe(401);
    expect(err.message).toContain('Luma');
    expect(err.message).not.toContain(fake.key);
    expect(fake.submissions()).toBe(0);
  });

  it('classes 429 as rate_limited with Retry-After, answered once (no SDK retries)', async () => {
    const { fake, settings } = await start({ scenario: 'rate_limited', retryAfterSeconds: 7 });
    const err = await providerError(lumaAdapter.submit(settings, task()));
    expect(err.errorClass).toBe('rate_limited');
    expect(err.retryAfterSeconds).toBe(7);
    expect(fake.requests).toHaveLength(1);
  });

  it('classes 5xx as server, answered once (no SDK retries)', async () => {
    const { fake, settings } = await start();
    const job = await lumaAdapter.submit(settings, task());
    fake.scenario = 'server_error';
    const before = fake.requests.length;
    const err = await providerError(lumaAdapter.poll(settings, job, signal()));
    expect(err.errorClass).toBe('server');
    expect(err.status).toBe(500);
    expect(fake.requests.length - before).toBe(1);
  });

  it('classes JSON that does not parse as malformed, on submit and on poll', async () => {
    const { fake, settings } = await start();
    const job = await lumaAdapter.submit(settings, task());
    fake.scenario = 'malformed';
    expect((await providerError(lumaAdapter.poll(settings, job, signal()))).errorClass).toBe('malformed');
    expect((await providerError(lumaAdapter.submit(settings, task()))).errorClass).toBe('malformed');
  });

  it('classes an unreachable Luma as server, and an aborted call as canceled', async () => {
    const { fake: closing, settings } = await start();
    const baseUrl = closing.baseUrl;
    await closing.close();
    fake = undefined;
    const down = await providerError(lumaAdapter.testKey({ ...settings, baseUrl }, signal()));
    expect(down.errorClass).toBe('server');

    const { settings: live } = await start({ scenario: 'slow' });
    const controller = new AbortController();
    controller.abort();
    const aborted = await providerError(lumaAdapter.submit(live, task({ signal: controller.signal })));
    expect(aborted.errorClass).toBe('canceled');
  });

  it('classes a poll that outlives its own deadline as server (retryable), not canceled', async () => {
    // Luma accepting the connection and never answering.
    const silent = await startLoopback(() => undefined);
    try {
      const settings = { apiKey: 'test-luma-key-0001', baseUrl: `${silent.baseUrl}/dream-machine/v1` };
      const job = { id: 'gen-1', state: {} };
      const err = await providerError(lumaAdapter.poll(settings, job, AbortSignal.timeout(100)));
      expect(err.errorClass).toBe('server');
      expect(err.message).toContain('in time');
    } finally {
      await silent.close();
    }
  });

  it('tests a key with the credits call, which makes nothing', async () => {
    const { fake, settings } = await start();
    await expect(lumaAdapter.testKey(settings, signal())).resolves.toBeUndefined();
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /dream-machine/v1/credits']);
    expect(fake.submissions()).toBe(0);

    const bad = await providerError(lumaAdapter.testKey({ ...settings, apiKey: 'luma-wrong-key-9999' }, signal()));
    expect(bad.errorClass).toBe('auth');
    expect(bad.message).not.toContain('luma-wrong-key-9999');
  });

  it('asks for a callback when the service has a public URL, and reads deliveries as the job to poll', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { fake, settings } = await start();
      const job = await lumaAdapter.submit({ ...settings, webhookUrl: receiver.url }, task());
      expect(fake.requests.at(-1)?.body).toMatchObject({ callback_url: receiver.url });

      // Luma posts the generation object on dreaming and on completed.
      const deliveries = [await receiver.next(), await receiver.next()];
      const states = deliveries.map((d) => (JSON.parse(d.body.toString()) as { state: string }).state);
      expect(states).toEqual(['dreaming', 'completed']);
      for (const delivery of deliveries) {
        expect(delivery.headers['content-type']).toBe('application/json');
        expect(await lumaAdapter.webhook?.({ apiKey: fake.key }, delivery)).toEqual({ jobId: job.id });
      }
      expect(await lumaAdapter.poll(settings, job, signal())).toMatchObject({ status: 'succeeded' });

      // Not a Luma delivery (its ids are UUIDs): ignored.
      const long = JSON.stringify({ id: `${job.id}${'j'.repeat(1000)}`, state: 'completed' });
      for (const body of ['not json', '[]', '{"id": 5, "state": "completed"}', '{"id": "x", "state": "done"}', long]) {
        expect(
          await lumaAdapter.webhook?.({ apiKey: fake.key }, { headers: {}, body: Buffer.from(body) }),
        ).toBeUndefined();
      }
    } finally {
      await receiver.close();
    }
  });

  it('declares how it is reached: env key, default base URL, webhooks, no private start frames', () => {
    expect(lumaAdapter).toMatchObject({
      id: 'luma',
      envKey: 'LUMAAI_API_KEY',
      defaultBaseUrl: 'https://api.lumalabs.ai/dream-machine/v1',
      webhooks: true,
      startImage: 'none',
    });
  });
});
