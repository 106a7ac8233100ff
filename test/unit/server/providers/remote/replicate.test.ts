import { validateWebhook } from 'replicate';
import { pollToEnd, providerError, providerTask } from './adapter-kit.ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  replicateAdapter,
  replicateInput,
  verifyReplicateSignature,
} from '../../../../../server/providers/remote/replicate.ts';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { AdapterSettings, ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { startWebhookReceiver } from '../../../../fakes/providers/loopback.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';
import { startReplicateFake } from '../../../../fakes/providers/replicate.ts';
import type { ReplicateFake } from '../../../../fakes/providers/replicate.ts';
import type { FakeScenario } from '../../../../fakes/providers/types.ts';

const signal = () => new AbortController().signal;

const videoTask = (overrides: Partial<ProviderTask> = {}): ProviderTask =>
  providerTask({
    path: 'google/veo-3-fast',
    modelId: 'veo/3-fast',
    prompt: 'a lighthouse at dusk',
    durationSeconds: 8,
    ...overrides,
  });

function imageTask(overrides: Partial<ProviderTask> = {}): ProviderTask {
  return videoTask({
    kind: 'image',
    path: 'black-forest-labs/flux-schnell',
    modelId: 'flux/schnell',
    size: '1024x768',
    width: 1024,
    height: 768,
    aspectRatio: '4:3',
    durationSeconds: 0,
    ...overrides,
  });
}

let fake: ReplicateFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(scenario: FakeScenario = 'succeed'): Promise<{ fake: ReplicateFake; settings: AdapterSettings }> {
  fake = await startReplicateFake({ scenario, pollsBeforeDone: 2, retryAfterSeconds: 7 });
  return { fake, settings: { apiKey: fake.key, baseUrl: fake.baseUrl } };
}

beforeAll(async () => {
  await fakeMedia();
});

describe('Replicate adapter against its contract fake', () => {
  it('creates an async prediction, polls starting → processing → succeeded, and returns the MP4', async () => {
    const { fake, settings } = await start();
    const job = await replicateAdapter.submit(settings, videoTask({ audio: true, seed: 5 }));
    expect(job.state).toEqual({ model: 'google/veo-3-fast' });
    const { seen, last } = await pollToEnd(replicateAdapter, settings, job);
    expect(seen).toEqual(['queued', 'running', 'succeeded']);
    if (last.status !== 'succeeded') throw new Error('expected success');
    const output = last.outputs[0]!;
    if (!('url' in output)) throw new Error('expected a URL');
    const bytes = Buffer.from(await (await fetch(output.url)).arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');

    const create = fake.requests.find((r) => r.method === 'POST')!;
    expect(create.path).toBe('/v1/models/google/veo-3-fast/predictions');
    expect(create.headers.authorization).toBe(`Bearer ${fake.key}`);
    expect(create.headers.prefer).toBeUndefined();
    expect(create.body).toEqual({
      input: {
        prompt: 'a lighthouse at dusk',
        duration: 8,
        resolution: '720p',
        aspect_ratio: '16:9',
        generate_audio: true,
        seed: 5,
      },
    });
    expect(fake.requests.filter((r) => r.path === `/v1/predictions/${job.id}`)).toHaveLength(3);
    expect(fake.submissions()).toBe(1);
  });

  it('reads a list of image URLs from FLUX schnell', async () => {
    const { fake, settings } = await start();
    const job = await replicateAdapter.submit(settings, imageTask({ count: 2 }));
    const { last } = await pollToEnd(replicateAdapter, settings, job);
    expect(last.status).toBe('succeeded');
    expect(fake.inputs.get(job.id)).toEqual({
      output_format: 'png',
      prompt: 'a lighthouse at dusk',
      aspect_ratio: '4:3',
      num_outputs: 2,
    });
  });

  it('uploads the start image through the files API and passes its URL', async () => {
    const { fake, settings } = await start();
    const media = await fakeMedia();
    const task = videoTask({
      path: 'kwaivgi/kling-v2.1',
      durationSeconds: 5,
      startImage: { path: media.image.path, mime: 'image/png', bytes: media.image.bytes },
      parameters: { negative_prompt: 'blur' },
    });
    const job = await replicateAdapter.submit(settings, task);
    const input = fake.inputs.get(job.id) as { start_image: string };
    const file = fake.uploads.get(input.start_image);
    expect(file?.bytes.length).toBe(media.image.bytes);
    expect(file?.mime).toBe('image/png');
    const upload = fake.requests.find((r) => r.path === '/v1/files')!;
    expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload.headers.authorization).toBe(`Bearer ${fake.key}`);
    expect(input).toEqual({
      negative_prompt: 'blur',
      prompt: 'a lighthouse at dusk',
      duration: 5,
      mode: 'standard',
      start_image: input.start_image,
    });
  });

  it('cancels a running prediction', async () => {
    const { fake, settings } = await start('slow');
    const job = await replicateAdapter.submit(settings, videoTask());
    expect((await replicateAdapter.poll(settings, job, signal())).status).toBe('queued');
    expect((await replicateAdapter.poll(settings, job, signal())).status).toBe('running');
    expect((await replicateAdapter.poll(settings, job, signal())).status).toBe('running');
    await replicateAdapter.cancel(settings, job, signal());
    expect(fake.requests.some((r) => r.method === 'POST' && r.path === `/v1/predictions/${job.id}/cancel`)).toBe(true);
    expect(await replicateAdapter.poll(settings, job, signal())).toEqual({ status: 'canceled' });
    await replicateAdapter.cancel(settings, job, signal());
    // A prediction Replicate no longer knows is nothing to cancel.
    await replicateAdapter.cancel(settings, { id: 'gone', state: {} }, signal());
  });

  it('maps a prediction canceled elsewhere to canceled', async () => {
    const { settings } = await start('cancel');
    const job = await replicateAdapter.submit(settings, videoTask());
    expect((await pollToEnd(replicateAdapter, settings, job)).last).toEqual({ status: 'canceled' });
  });

  it.each([
    ['fail', 'failed'],
    ['content_policy', 'content_policy'],
    ['no_output', 'malformed'],
  ] as const)('a %s prediction ends failed with class %s', async (scenario, errorClass) => {
    const { settings } = await start(scenario);
    const job = await replicateAdapter.submit(settings, videoTask());
    const { last } = await pollToEnd(replicateAdapter, settings, job);
    if (last.status !== 'failed') throw new Error(`expected failed, got ${last.status}`);
    expect(last.error.errorClass).toBe(errorClass);
    expect(last.error.message).toMatch(/^Replicate/);
    if (scenario === 'content_policy') expect(last.error.message).toContain('flagged as sensitive');
  });

  it('a poll answered with malformed JSON throws malformed', async () => {
    const { settings } = await start('malformed');
    const job = await replicateAdapter.submit(settings, videoTask());
    await replicateAdapter.poll(settings, job, signal());
    await replicateAdapter.poll(settings, job, signal());
    const err = await providerError(replicateAdapter.poll(settings, job, signal()));
    expect(err.errorClass).toBe('malformed');
  });

  it.each([
    ['unauthorized', 'auth', 401],
    ['rate_limited', 'rate_limited', 429],
    ['server_error', 'server', 500],
  ] as const)('a create answered %s throws %s once (no SDK retries)', async (scenario, errorClass, status) => {
    const { fake, settings } = await start(scenario);
    const err = await providerError(replicateAdapter.submit(settings, videoTask()));
    expect(err.errorClass).toBe(errorClass);
    expect(err.status).toBe(status);
    expect(err.message).toMatch(/^Replicate/);
    expect(err.message).not.toContain(fake.key);
    if (scenario === 'rate_limited') expect(err.retryAfterSeconds).toBe(7);
    expect(fake.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('a refused poll is not retried by the SDK either', async () => {
    const { fake, settings } = await start();
    const job = await replicateAdapter.submit(settings, videoTask());
    fake.scenario = 'unauthorized';
    const err = await providerError(replicateAdapter.poll(settings, job, signal()));
    expect(err.errorClass).toBe('auth');
    expect(fake.requests.filter((r) => r.path === `/v1/predictions/${job.id}`)).toHaveLength(1);
  });

  it('an input Replicate rejects is invalid_input with its reason', async () => {
    const { settings } = await start();
    // Without a schema of its own (an empty one), the request reaches Replicate, which refuses it.
    const err = await providerError(
      replicateAdapter.submit(settings, videoTask({ prompt: '', inputSchema: { schema: {} } })),
    );
    expect(err.errorClass).toBe('invalid_input');
    expect(err.status).toBe(422);
    expect(err.message).toContain('input.prompt');
    // With the model's schema, the same input is refused before anything is sent.
    const local = await providerError(replicateAdapter.submit(settings, videoTask({ prompt: '' })));
    expect(local.message).toContain("prompt '' is not accepted");
  });

  it('a wrong key is refused as auth and never shows in the message', async () => {
    const { fake } = await start();
    const wrong = 'r8_wrongwrongwrong123456';
    const err = await providerError(replicateAdapter.submit({ apiKey: wrong, baseUrl: fake.baseUrl }, videoTask()));
    expect(err.errorClass).toBe('auth');
    expect(err.message).toBe('Replicate refused the key (HTTP 401)');
    expect(JSON.stringify(err) + err.message).not.toContain(wrong);
  });

  it('testKey reads the account for a good key and refuses a bad one', async () => {
    const { fake, settings } = await start();
    await replicateAdapter.testKey(settings, signal());
    expect(fake.requests.at(-1)?.path).toBe('/v1/account');
    expect(fake.submissions()).toBe(0);
    const err = await providerError(replicateAdapter.testKey({ ...settings, apiKey: 'r8_bad' }, signal()));
    expect(err.errorClass).toBe('auth');
  });

  it('asks for a completion webhook, and accepts only a delivery signed with the account secret', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { fake, settings } = await start();
      const hooked = { ...settings, webhookUrl: receiver.url };
      const job = await replicateAdapter.submit(hooked, videoTask());
      const create = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/predictions'))!;
      expect(create.body).toMatchObject({ webhook: receiver.url, webhook_events_filter: ['completed'] });
      expect(fake.requests.some((r) => r.path === '/v1/webhooks/default/secret')).toBe(true);

      const delivery = await receiver.next();
      // The fake signs the way the SDK's own validator expects.
      const request = new Request(receiver.url, {
        method: 'POST',
        headers: delivery.headers,
        body: new Uint8Array(delivery.body),
      });
      expect(await validateWebhook(request, fake.webhookSecret)).toBe(true);

      const parsed = await replicateAdapter.webhook!(hooked, delivery);
      expect(parsed?.jobId).toBe(job.id);
      expect(parsed?.status?.status).toBe('succeeded');

      const tampered = Buffer.from(delivery.body.toString('utf8').replace('succeeded', 'failed'));
      expect(await replicateAdapter.webhook!(hooked, { headers: delivery.headers, body: tampered })).toBeUndefined();
      const unsigned = { ...delivery.headers };
      delete unsigned['webhook-signature'];
      expect(await replicateAdapter.webhook!(hooked, { headers: unsigned, body: delivery.body })).toBeUndefined();
      expect(
        await replicateAdapter.webhook!(hooked, { headers: delivery.headers, body: Buffer.from('nope') }),
      ).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });

  it('a webhook arriving before the secret is known only names the job (after a restart)', async () => {
    const settings = { apiKey: 'r8_never_used_for_a_secret', baseUrl: 'http://127.0.0.1:9/v1' };
    const prediction = { id: 'gm3qorzdhgbfurvjtvhg6dckhu', status: 'succeeded', output: 'https://x/y.mp4' };
    const body = Buffer.from(JSON.stringify(prediction));
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,xyz' };
    expect(await replicateAdapter.webhook!(settings, { headers, body })).toEqual({ jobId: prediction.id });
    // An id not of Replicate's form (letters and digits, 16 to 64) is not Replicate's.
    for (const id of ['abc', 'x'.repeat(65), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '../../etc/passwd0000'])
      expect(
        await replicateAdapter.webhook!(settings, {
          headers,
          body: Buffer.from(JSON.stringify({ ...prediction, id })),
        }),
      ).toBeUndefined();
    expect(await replicateAdapter.webhook!(settings, { headers: {}, body })).toBeUndefined();
  });

  it('verifies signatures with a timestamp tolerance', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const body = Buffer.from('{"id":"p1"}');
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000' };
    const sign = async () => {
      const { createHmac } = await import('node:crypto');
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`msg_1.1700000000.${body.toString()}`).digest('base64')}`;
    };
    return sign().then((signature) => {
      const signed = { ...headers, 'webhook-signature': `v1,bogus ${signature}` };
      expect(verifyReplicateSignature(secret, signed, body, 1700000000 + 60)).toBe(true);
      expect(verifyReplicateSignature(secret, signed, body, 1700000000 + 3600)).toBe(false);
      expect(
        verifyReplicateSignature(`whsec_${Buffer.from('other').toString('base64')}`, signed, body, 1700000000),
      ).toBe(false);
    });
  });

  it('maps v1 fields to each model', () => {
    const base = videoTask();
    expect(replicateInput({ ...base, path: 'wan-video/wan-2.2-t2v-fast', size: '480p', durationSeconds: 5 })).toEqual({
      prompt: base.prompt,
      resolution: '480p',
      frames_per_second: 16,
      num_frames: 81,
      aspect_ratio: '16:9',
    });
    expect(
      replicateInput({ ...base, path: 'minimax/hailuo-02', size: '768p', durationSeconds: 6 }, 'https://f/1'),
    ).toEqual({ prompt: base.prompt, duration: 6, resolution: '768p', first_frame_image: 'https://f/1' });
    expect(replicateInput({ ...base, path: 'luma/ray-2-720p', durationSeconds: 5 }, 'https://f/1')).toEqual({
      prompt: base.prompt,
      duration: 5,
      aspect_ratio: '16:9',
      start_image: 'https://f/1',
    });
    const image = imageTask();
    expect(
      replicateInput({ ...image, path: 'black-forest-labs/flux-dev', parameters: { guidance_scale: 3.5 }, seed: 1 }),
    ).toEqual({
      output_format: 'png',
      guidance: 3.5,
      prompt: base.prompt,
      aspect_ratio: '4:3',
      num_outputs: 1,
      seed: 1,
    });
    expect(
      replicateInput({
        ...image,
        path: 'black-forest-labs/flux-1.1-pro',
        aspectRatio: '7:5',
        width: 1400,
        height: 1000,
      }),
    ).toEqual({ output_format: 'png', prompt: base.prompt, aspect_ratio: 'custom', width: 1408, height: 992 });
    expect(() => replicateInput({ ...base, path: 'someone/else' })).toThrow(ProviderError);
  });
});
