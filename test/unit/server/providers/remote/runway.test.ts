import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollToEnd, providerError, providerTask } from './adapter-kit.ts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runwayAdapter } from '../../../../../server/providers/remote/runway.ts';
import type { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type {
  AdapterSettings,
  ProviderTask,
  StartImage,
  SubmittedJob,
} from '../../../../../server/providers/remote/contract.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';
import { startRunwayFake } from '../../../../fakes/providers/runway.ts';
import type { RunningFake } from '../../../../fakes/providers/types.ts';

const signal = new AbortController().signal;
let startImage: StartImage;
let scratch: string;

beforeAll(async () => {
  const image = (await fakeMedia()).image;
  startImage = { path: image.path, mime: image.mime, bytes: (await stat(image.path)).size };
  scratch = await mkdtemp(join(tmpdir(), 'clipdesk-runway-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const task = (overrides: Partial<ProviderTask> = {}): ProviderTask =>
  providerTask({
    path: 'gen4_turbo',
    modelId: 'runway/gen-4-turbo',
    prompt: 'the camera pushes in slowly on the lighthouse',
    startImage,
    ...overrides,
  });

describe('runwayAdapter against the Runway API fake, through @runwayml/sdk', () => {
  let fake: RunningFake;
  let settings: AdapterSettings;
  const errors: ProviderError[] = [];

  beforeEach(async () => {
    fake = await startRunwayFake({ retryAfterSeconds: 9 });
    settings = { apiKey: fake.key, baseUrl: fake.baseUrl };
  });
  afterEach(async () => {
    await fake.close();
  });

  it('describes itself as the contract asks', () => {
    expect(runwayAdapter.id).toBe('runway');
    expect(runwayAdapter.envKey).toBe('RUNWAYML_API_SECRET');
    expect(runwayAdapter.defaultBaseUrl).toBe('https://api.dev.runwayml.com');
    expect(runwayAdapter.webhooks).toBe(false);
    expect(runwayAdapter.startImage).toBe('data_uri');
  });

  it('starts gen4_turbo with the start frame as a data URI, polls PENDING → RUNNING → SUCCEEDED, and returns the output with its cost', async () => {
    const job = await runwayAdapter.submit(
      settings,
      task({ seed: 42, parameters: { public_figure_threshold: 'low' } }),
    );
    expect(JSON.parse(JSON.stringify(job))).toEqual(job);
    const created = fake.requests.find((r) => r.method === 'POST')!;
    expect(created.path).toBe('/v1/image_to_video');
    expect(created.headers['authorization']).toBe(`Bearer ${fake.key}`);
    expect(created.headers['x-runway-version']).toBe('2024-11-06');
    expect(created.body).toEqual({
      model: 'gen4_turbo',
      promptImage: `data:image/png;base64,${(await readFile(startImage.path)).toString('base64')}`,
      promptText: 'the camera pushes in slowly on the lighthouse',
      ratio: '1280:720',
      duration: 5,
      seed: 42,
      contentModeration: { publicFigureThreshold: 'low' },
    });

    const { last: status, seen } = await pollToEnd(runwayAdapter, settings, job);
    expect(seen).toEqual(['queued', 'running', 'succeeded']);
    expect(fake.requests.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual(
      Array.from({ length: 3 }, () => `/v1/tasks/${job.id}`),
    );
    expect(status.status).toBe('succeeded');
    if (status.status !== 'succeeded') return;
    expect(status.cost).toBe(0.25);
    expect(status.outputs).toHaveLength(1);
    const output = status.outputs[0]!;
    if (!('url' in output)) throw new Error('expected a URL output');
    expect(output.url).not.toContain(fake.key);
    expect(output.headers).toBeUndefined();
    const file = await fetch(output.url);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(await readFile((await fakeMedia()).video.path))).toBe(true);
  });

  it('reports progress while running', async () => {
    const job = await runwayAdapter.submit(settings, task());
    expect(await runwayAdapter.poll(settings, job, signal)).toEqual({ status: 'queued' });
    const running = await runwayAdapter.poll(settings, job, signal);
    expect(running.status).toBe('running');
    if (running.status === 'running') expect(running.progress).toBeGreaterThan(0);
  });

  it('resumes polling a persisted task without a second submission', async () => {
    const job = JSON.parse(JSON.stringify(await runwayAdapter.submit(settings, task()))) as SubmittedJob;
    expect((await pollToEnd(runwayAdapter, settings, job)).last.status).toBe('succeeded');
    expect(fake.submissions()).toBe(1);
  });

  it('maps each v1 aspect ratio to a Gen-4 Turbo ratio and leaves out what the request does not set', async () => {
    const ratios = {
      '16:9': '1280:720',
      '9:16': '720:1280',
      '4:3': '1104:832',
      '3:4': '832:1104',
      '1:1': '960:960',
      '21:9': '1584:672',
    };
    for (const [aspectRatio, ratio] of Object.entries(ratios)) {
      await runwayAdapter.submit(settings, task({ aspectRatio, durationSeconds: 10, prompt: ' ' }));
      const body = fake.requests.at(-1)!.body as Record<string, unknown>;
      expect(body['ratio']).toBe(ratio);
      expect(body['duration']).toBe(10);
      expect(body).not.toHaveProperty('promptText');
      expect(body).not.toHaveProperty('seed');
    }
  });

  it('refuses, before calling Runway, what Gen-4 Turbo cannot take: no start image, another ratio or duration, an image too large for a data URI that cannot be re-encoded', async () => {
    const big = join(scratch, 'big.png');
    await writeFile(big, Buffer.alloc(3_800_000));
    const refused: Array<[Partial<ProviderTask>, string]> = [
      [{ startImage: undefined }, 'start image'],
      [{ aspectRatio: '2:1' }, 'aspect ratio'],
      [{ durationSeconds: 12 }, 'duration'],
      [{ size: '1080p' }, '720p'],
      [{ path: 'gen3a_turbo' }, 'gen4_turbo'],
      [{ kind: 'image' }, 'videos'],
      [{ startImage: { path: big, mime: 'image/png', bytes: 3_800_000 } }, '5 MB'],
      // The size the service measured is checked, and so is the file as read.
      [{ startImage: { path: big, mime: 'image/png', bytes: 1000 } }, '5 MB'],
      [{ seed: -1 }, 'seed'],
      [{ prompt: 'x'.repeat(1001) }, '1000'],
      [{ parameters: { public_figure_threshold: 'none' } }, 'public_figure_threshold'],
    ];
    for (const [overrides, says] of refused) {
      const err = await providerError(runwayAdapter.submit(settings, task(overrides)));
      expect(err.errorClass).toBe('invalid_input');
      expect(err.message).toContain('Runway');
      expect(err.message).toContain(says);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('sends a start image of a type Runway does not take as a JPEG', async () => {
    await runwayAdapter.submit(settings, task({ startImage: { ...startImage, mime: 'image/gif' } }));
    const sent = fake.requests.find((r) => r.method === 'POST')?.body as { promptImage?: string };
    expect(sent.promptImage?.startsWith('data:image/jpeg;base64,')).toBe(true);
  });

  it('accepts a start image just under the data URI limit', async () => {
    const edge = join(scratch, 'edge.png');
    await writeFile(edge, Buffer.alloc(3_700_000));
    await runwayAdapter.submit(settings, task({ startImage: { path: edge, mime: 'image/png', bytes: 3_700_000 } }));
    expect(fake.submissions()).toBe(1);
  });

  it('reports FAILED as failed, SAFETY.* as a content-policy refusal, CANCELLED as canceled, no output as malformed', async () => {
    const expectations = [
      ['fail', 'failed', 'INTERNAL.BAD_OUTPUT.CODE01'],
      ['content_policy', 'content_policy', 'did not pass our content moderation'],
      ['no_output', 'malformed', 'without an output'],
    ] as const;
    for (const [scenario, errorClass, says] of expectations) {
      fake.scenario = scenario;
      const { last: status } = await pollToEnd(runwayAdapter, settings, await runwayAdapter.submit(settings, task()));
      expect(status.status).toBe('failed');
      if (status.status !== 'failed') continue;
      expect(status.error.errorClass).toBe(errorClass);
      expect(status.error.message).toContain(says);
      errors.push(status.error);
    }
    fake.scenario = 'cancel';
    expect((await pollToEnd(runwayAdapter, settings, await runwayAdapter.submit(settings, task()))).last).toEqual({
      status: 'canceled',
    });
  });

  it('reports a task THROTTLED by the concurrency limit as queued', async () => {
    fake.scenario = 'slow';
    const jobs = [];
    for (let i = 0; i < 4; i += 1) jobs.push(await runwayAdapter.submit(settings, task()));
    const raw = await fetch(`${fake.baseUrl}/v1/tasks/${jobs[2]!.id}`, {
      headers: { authorization: `Bearer ${fake.key}`, 'x-runway-version': '2024-11-06' },
    });
    expect(((await raw.json()) as { status: string }).status).toBe('THROTTLED');
    expect(await runwayAdapter.poll(settings, jobs[3]!, signal)).toEqual({ status: 'queued' });
  });

  it('keeps a slow task running', async () => {
    fake.scenario = 'slow';
    const job = await runwayAdapter.submit(settings, task());
    const seen = [];
    for (let i = 0; i < 6; i += 1) seen.push((await runwayAdapter.poll(settings, job, signal)).status);
    expect(seen).toEqual(['queued', 'running', 'running', 'running', 'running', 'running']);
  });

  it('cancels with DELETE /v1/tasks/{id}, and a task already gone needs nothing', async () => {
    fake.scenario = 'slow';
    const job = await runwayAdapter.submit(settings, task());
    await runwayAdapter.poll(settings, job, signal);
    await expect(runwayAdapter.cancel(settings, job, signal)).resolves.toBeUndefined();
    const cancel = fake.requests.at(-1)!;
    expect(cancel.method).toBe('DELETE');
    expect(cancel.path).toBe(`/v1/tasks/${job.id}`);
    expect(cancel.headers['authorization']).toBe(`Bearer ${fake.key}`);
    // Runway cannot fetch a cancelled task again; cancelling twice is harmless.
    await expect(runwayAdapter.cancel(settings, job, signal)).resolves.toBeUndefined();
    const gone = await providerError(runwayAdapter.poll(settings, job, signal));
    expect(gone.errorClass).toBe('failed');
  });

  it('classifies create failures: 401, 429 with Retry-After, 5xx, unparsable JSON, a refused body', async () => {
    const cases = [
      ['unauthorized', 'auth', 401],
      ['rate_limited', 'rate_limited', 429],
      ['server_error', 'server', 502],
    ] as const;
    for (const [scenario, errorClass, status] of cases) {
      fake.scenario = scenario;
      const err = await providerError(runwayAdapter.submit(settings, task()));
      errors.push(err);
      expect(err.errorClass).toBe(errorClass);
      expect(err.status).toBe(status);
      expect(err.provider).toBe('runway');
      expect(err.message).toContain('Runway');
      if (scenario === 'rate_limited') expect(err.retryAfterSeconds).toBe(9);
      if (scenario === 'unauthorized') expect(err.message).toContain('refused the key');
    }
    // One request each: the SDK's own retries are off, the runner owns them.
    expect(fake.requests.filter((r) => r.method === 'POST')).toHaveLength(3);

    fake.scenario = 'malformed';
    const malformed = await providerError(runwayAdapter.submit(settings, task()));
    expect(malformed.errorClass).toBe('malformed');
    errors.push(malformed);

    // Runway's own validation (a data URI the fake cannot decode) is invalid input, with its issues.
    fake.scenario = 'succeed';
    const odd = join(scratch, 'odd.png');
    await writeFile(odd, Buffer.alloc(0));
    const invalid = await providerError(
      runwayAdapter.submit(settings, task({ startImage: { path: odd, mime: 'image/png', bytes: 0 } })),
    );
    expect(invalid.errorClass).toBe('invalid_input');
    expect(invalid.status).toBe(400);
    expect(invalid.message).toContain('Invalid data URI');
    expect(fake.submissions()).toBe(0);
  });

  it('tests a key with GET /v1/organization: good, wrong, revoked', async () => {
    await expect(runwayAdapter.testKey(settings, signal)).resolves.toBeUndefined();
    const org = fake.requests.at(-1)!;
    expect([org.method, org.path]).toEqual(['GET', '/v1/organization']);
    expect(fake.submissions()).toBe(0);

    const wrongKey = 'key_wrong0123456789abcdef';
    const wrong = await providerError(runwayAdapter.testKey({ apiKey: wrongKey, baseUrl: fake.baseUrl }, signal));
    expect(wrong.errorClass).toBe('auth');
    expect(wrong.message).toContain('refused the key');
    expect(wrong.message).not.toContain(wrongKey);

    fake.scenario = 'unauthorized';
    const revoked = await providerError(runwayAdapter.testKey(settings, signal));
    expect(revoked.errorClass).toBe('auth');
    errors.push(wrong, revoked);
  });

  it('classifies an unreachable API as a server error', async () => {
    const closed = await startRunwayFake();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const err = await providerError(runwayAdapter.testKey({ apiKey: fake.key, baseUrl }, signal));
    expect(err.errorClass).toBe('server');
    expect(err.message).toContain('Runway');
  });

  it('reports an aborted call (the runner gave up) as canceled', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await providerError(runwayAdapter.testKey(settings, controller.signal));
    expect(err.errorClass).toBe('canceled');
  });

  it('never puts the key into an error message', () => {
    expect(errors.length).toBeGreaterThan(0);
    for (const err of errors) expect(err.message).not.toContain(fake.key);
  });
});
