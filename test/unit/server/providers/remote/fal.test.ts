import { pollToEnd, providerError, providerTask } from './adapter-kit.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { falAdapter, falInput } from '../../../../../server/providers/remote/fal.ts';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { AdapterSettings, ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { generateKeyPairSync } from 'node:crypto';
import { falWebhookHeaders, startFalFake } from '../../../../fakes/providers/fal.ts';
import type { FalFake } from '../../../../fakes/providers/fal.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';
import type { FakeScenario } from '../../../../fakes/providers/types.ts';
import { startWebhookReceiver } from '../../../../fakes/providers/loopback.ts';

const signal = () => new AbortController().signal;

const videoTask = (overrides: Partial<ProviderTask> = {}): ProviderTask =>
  providerTask({ path: 'fal-ai/kling-video/v2.1/master/text-to-video', modelId: 'kling/v2.1-standard', ...overrides });

function imageTask(overrides: Partial<ProviderTask> = {}): ProviderTask {
  return videoTask({
    kind: 'image',
    path: 'fal-ai/flux/schnell',
    modelId: 'flux/schnell',
    size: '1024x768',
    width: 1024,
    height: 768,
    aspectRatio: '4:3',
    durationSeconds: 0,
    ...overrides,
  });
}

let fake: FalFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(scenario: FakeScenario = 'succeed'): Promise<{ fake: FalFake; settings: AdapterSettings }> {
  fake = await startFalFake({ scenario, pollsBeforeDone: 2, retryAfterSeconds: 7 });
  return { fake, settings: { apiKey: fake.key, baseUrl: fake.baseUrl } };
}

beforeAll(async () => {
  await fakeMedia();
});

describe('fal adapter against its contract fake', () => {
  it('submits, polls queued → running → succeeded, and returns a downloadable MP4 with audio', async () => {
    const { fake, settings } = await start();
    const job = await falAdapter.submit(settings, videoTask());
    expect(job.id).toMatch(/[0-9a-f-]{36}/);
    expect(job.state).toEqual({ path: 'fal-ai/kling-video/v2.1/master/text-to-video', kind: 'video' });
    const { seen, last } = await pollToEnd(falAdapter, settings, job);
    expect(seen).toEqual(['queued', 'running', 'succeeded']);
    if (last.status !== 'succeeded') throw new Error('expected success');
    expect(last.outputs).toHaveLength(1);
    const output = last.outputs[0]!;
    if (!('url' in output)) throw new Error('expected a URL');
    const res = await fetch(output.url);
    expect(res.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(bytes.includes(Buffer.from('mp4a'))).toBe(true);

    // The real paths and auth header, through the SDK only (host moved by the request middleware).
    const submit = fake.requests.find((r) => r.method === 'POST')!;
    expect(submit.path).toBe('/fal-ai/kling-video/v2.1/master/text-to-video');
    expect(submit.headers.authorization).toBe(`Key ${fake.key}`);
    expect(submit.body).toEqual({ prompt: 'a lighthouse at dusk', duration: '5', aspect_ratio: '16:9' });
    expect(fake.requests.some((r) => r.path === `/fal-ai/kling-video/requests/${job.id}/status?logs=0`)).toBe(true);
    expect(fake.requests.some((r) => r.path === `/fal-ai/kling-video/requests/${job.id}`)).toBe(true);
    expect(fake.submissions()).toBe(1);
  });

  it('returns every image of a FLUX job', async () => {
    const { fake, settings } = await start();
    const job = await falAdapter.submit(settings, imageTask({ count: 1, seed: 7 }));
    const { last } = await pollToEnd(falAdapter, settings, job);
    expect(last.status).toBe('succeeded');
    expect(fake.inputs.get(job.id)).toEqual({
      prompt: 'a lighthouse at dusk',
      image_size: { width: 1024, height: 768 },
      num_images: 1,
      seed: 7,
    });
  });

  it('uploads the start image to fal storage and sends its URL as image_url', async () => {
    const { fake, settings } = await start();
    const media = await fakeMedia();
    const task = videoTask({
      path: 'fal-ai/kling-video/v2.1/standard/image-to-video',
      startImage: { path: media.image.path, mime: 'image/png', bytes: media.image.bytes },
    });
    const job = await falAdapter.submit(settings, task);
    const input = fake.inputs.get(job.id) as { image_url: string };
    expect(fake.uploads.get(input.image_url)?.bytes.length).toBe(media.image.bytes);
    expect(fake.uploads.get(input.image_url)?.mime).toBe('image/png');
    const initiate = fake.requests.find((r) => r.path.startsWith('/storage/upload/initiate'))!;
    expect(initiate.path).toBe('/storage/upload/initiate?storage_type=fal-cdn-v3');
    expect(initiate.headers.authorization).toBe(`Key ${fake.key}`);
    expect(initiate.headers['x-fal-object-lifecycle']).toBe('{"expiration_duration_seconds":86400}');
    expect(input).toEqual({ prompt: 'a lighthouse at dusk', duration: '5', image_url: input.image_url });
  });

  it('cancels a running job at fal, which then reports it canceled', async () => {
    const { fake, settings } = await start('slow');
    const job = await falAdapter.submit(settings, videoTask());
    expect((await falAdapter.poll(settings, job, signal())).status).toBe('queued');
    expect((await falAdapter.poll(settings, job, signal())).status).toBe('running');
    expect((await falAdapter.poll(settings, job, signal())).status).toBe('running');
    await falAdapter.cancel(settings, job, signal());
    expect(
      fake.requests.some((r) => r.method === 'PUT' && r.path === `/fal-ai/kling-video/requests/${job.id}/cancel`),
    ).toBe(true);
    expect(await falAdapter.poll(settings, job, signal())).toEqual({ status: 'canceled' });
    // Cancelling a job that is over is not an error.
    await falAdapter.cancel(settings, job, signal());
  });

  it('maps a job canceled elsewhere to canceled', async () => {
    const { settings } = await start('cancel');
    const job = await falAdapter.submit(settings, videoTask());
    expect((await pollToEnd(falAdapter, settings, job)).last).toEqual({ status: 'canceled' });
  });

  it.each([
    ['fail', 'failed', videoTask],
    ['content_policy', 'content_policy', videoTask],
    ['content_policy', 'content_policy', imageTask],
    ['no_output', 'malformed', videoTask],
    ['malformed', 'malformed', videoTask],
  ] as const)('a %s job ends failed with class %s', async (scenario, errorClass, task) => {
    const { settings } = await start(scenario);
    const job = await falAdapter.submit(settings, task());
    const { last } = await pollToEnd(falAdapter, settings, job);
    if (last.status !== 'failed') throw new Error(`expected failed, got ${last.status}`);
    expect(last.error.errorClass).toBe(errorClass);
    expect(last.error.provider).toBe('fal');
    expect(last.error.message).toMatch(/^fal/);
    if (errorClass === 'content_policy' && task === videoTask) {
      expect(last.error.message).toContain('flagged by a content checker');
    }
  });

  it.each([
    ['unauthorized', 'auth', 401],
    ['rate_limited', 'rate_limited', 429],
    ['server_error', 'server', 500],
  ] as const)('a submit answered %s throws %s at once (no SDK retries)', async (scenario, errorClass, status) => {
    const { fake, settings } = await start(scenario);
    const err = await providerError(falAdapter.submit(settings, videoTask()));
    expect(err.errorClass).toBe(errorClass);
    expect(err.status).toBe(status);
    expect(err.message).toMatch(/^fal/);
    expect(err.message).not.toContain(fake.key);
    if (scenario === 'rate_limited') expect(err.retryAfterSeconds).toBe(7);
    if (scenario === 'unauthorized') expect(err.message).toBe('fal refused the key (HTTP 401)');
    expect(fake.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('an input fal rejects is invalid_input with its reason', async () => {
    const { settings, fake } = await start();
    // Without a schema of its own (an empty one), the request reaches fal, which refuses it.
    const err = await providerError(
      falAdapter.submit(settings, videoTask({ prompt: '', inputSchema: { schema: {} } })),
    );
    expect(err.errorClass).toBe('invalid_input');
    expect(err.status).toBe(422);
    expect(err.message).toBe('fal answered HTTP 422: Field required');
    // With the model's schema, the same input is refused before anything is sent.
    const before = fake.submissions();
    const local = await providerError(falAdapter.submit(settings, videoTask({ prompt: '' })));
    expect(local.errorClass).toBe('invalid_input');
    expect(local.message).toContain("prompt '' is not accepted");
    expect(fake.submissions()).toBe(before);
  });

  it('an aborted poll is canceled, not an error of fal', async () => {
    const { settings } = await start('slow');
    const job = await falAdapter.submit(settings, videoTask());
    const err = await providerError(falAdapter.poll(settings, job, AbortSignal.abort()));
    expect(err.errorClass).toBe('canceled');
  });

  it('a wrong key is refused as auth, and the key never shows in the message', async () => {
    const { fake } = await start();
    const wrong = 'fal-wrong-key-abcdef123456';
    const err = await providerError(falAdapter.submit({ apiKey: wrong, baseUrl: fake.baseUrl }, videoTask()));
    expect(err.errorClass).toBe('auth');
    expect(err.message).not.toContain(wrong);
    expect(JSON.stringify(err)).not.toContain(wrong);
  });

  it('an unreachable fal is a server error', async () => {
    const { fake, settings } = await start();
    await fake.close();
    const err = await providerError(falAdapter.submit(settings, videoTask()));
    expect(err.errorClass).toBe('server');
    expect(err.message).toMatch(/^fal could not be reached/);
  });

  it('testKey accepts a good key (404 for a request that does not exist) and refuses a bad one', async () => {
    const { fake, settings } = await start();
    await falAdapter.testKey(settings, signal());
    expect(fake.requests.at(-1)?.path).toMatch(/^\/fal-ai\/flux\/requests\/[0-9a-f-]+\/status/);
    expect(fake.submissions()).toBe(0);
    const err = await providerError(falAdapter.testKey({ ...settings, apiKey: 'fal-bad-key-0002' }, signal()));
    expect(err.errorClass).toBe('auth');
    expect(err.message).not.toContain('fal-bad-key-0002');
  });

  it('asks fal for a webhook and takes only a delivery signed by a key from fal’s JWKS', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { fake, settings: plain } = await start();
      const settings = { ...plain, jwksUrl: fake.jwksUrl };
      const job = await falAdapter.submit({ ...settings, webhookUrl: receiver.url }, videoTask());
      const submit = fake.requests.find((r) => r.method === 'POST')!;
      expect(new URL(submit.path, fake.baseUrl).searchParams.get('fal_webhook')).toBe(receiver.url);
      const delivery = await receiver.next();
      expect(await falAdapter.webhook!(settings, delivery)).toEqual({ jobId: job.id });
      expect(fake.requests.filter((r) => r.path === '/.well-known/jwks.json')).toHaveLength(1);
      // Status comes from the poll the runner makes next.
      const status = await falAdapter.poll(settings, job, signal());
      expect(status.status).toBe('succeeded');
      const body = delivery.body.toString('utf8');
      const refused = async (headers: Record<string, string>, text = body) =>
        expect(await falAdapter.webhook!(settings, { headers, body: Buffer.from(text) })).toBeUndefined();
      // The body changed after signing; no signature; a stale timestamp; another key's signature.
      await refused(delivery.headers, body.replace('"OK"', '"ERROR"'));
      const unsigned = { ...delivery.headers };
      delete unsigned['x-fal-webhook-signature'];
      await refused(unsigned);
      const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600;
      await refused(falWebhookHeaders(fake.signingKey, job.id, body, tenMinutesAgo));
      await refused(falWebhookHeaders(generateKeyPairSync('ed25519').privateKey, job.id, body));
      await refused({ ...delivery.headers, 'x-fal-webhook-signature': 'ab'.repeat(64) });
      // Not fal's shape: not JSON, no request id, an id that is not a UUID.
      await refused(delivery.headers, 'not json');
      await refused(delivery.headers, '{"id":"x"}');
      const longId = JSON.stringify({ request_id: 'j'.repeat(1000), status: 'OK' });
      await refused(falWebhookHeaders(fake.signingKey, job.id, longId), longId);
      // Keys are fetched once, not per delivery (a refetch is minutes away).
      expect(fake.requests.filter((r) => r.path === '/.well-known/jwks.json')).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('maps v1 fields to each model path', () => {
    const base = videoTask();
    const veo = falInput({ ...base, path: 'fal-ai/veo3/fast', durationSeconds: 8, audio: true, seed: 3 });
    expect(veo).toEqual({
      prompt: base.prompt,
      duration: '8s',
      resolution: '720p',
      aspect_ratio: '16:9',
      generate_audio: true,
      seed: 3,
    });
    const wan = falInput({ ...base, path: 'fal-ai/wan/v2.2-a14b/image-to-video', size: '480p' }, 'https://x/i.png');
    expect(wan).toEqual({
      prompt: base.prompt,
      resolution: '480p',
      frames_per_second: 16,
      num_frames: 81,
      image_url: 'https://x/i.png',
    });
    expect(falInput({ ...base, path: 'fal-ai/minimax/hailuo-02/standard/text-to-video', durationSeconds: 6 })).toEqual({
      prompt: base.prompt,
      duration: '6',
    });
    expect(
      falInput({ ...base, path: 'fal-ai/luma-dream-machine/ray-2', parameters: { loop: true, duration: 'ignored' } }),
    ).toEqual({ loop: true, prompt: base.prompt, duration: '5s', resolution: '720p', aspect_ratio: '16:9' });
    expect(() => falInput({ ...base, path: 'fal-ai/unknown' })).toThrow(ProviderError);
  });
});
