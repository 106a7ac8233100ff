import { providerError, providerTask } from './adapter-kit.ts';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdapterSettings, ProviderOutput, ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { openaiAdapter, openaiUsage } from '../../../../../server/providers/remote/openai.ts';
import { startOpenAIFake } from '../../../../fakes/providers/openai.ts';
import type { FakeOptions, RunningFake } from '../../../../fakes/providers/types.ts';

let fake: RunningFake | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(options: FakeOptions = {}): Promise<{ fake: RunningFake; settings: AdapterSettings }> {
  fake = await startOpenAIFake(options);
  return { fake, settings: { apiKey: fake.key, baseUrl: fake.baseUrl } };
}

const task = (overrides: Partial<ProviderTask> = {}): ProviderTask =>
  providerTask({
    kind: 'image',
    path: 'gpt-image-1',
    modelId: 'openai/gpt-image-1:1',
    prompt: 'a lighthouse at dawn, watercolour',
    size: '1024x1024',
    width: 1024,
    height: 1024,
    aspectRatio: '1:1',
    durationSeconds: 0,
    ...overrides,
  });

const signal = (): AbortSignal => new AbortController().signal;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function inline(output: ProviderOutput | undefined): { data: Buffer; mime: string } {
  if (!output || !('data' in output)) throw new Error('expected an inline output');
  return output;
}

describe('openaiAdapter against the OpenAI contract fake', () => {
  it('generates synchronously: the job comes back done, with the PNG inline and the cost from usage', async () => {
    const { fake, settings } = await start();
    const job = await openaiAdapter.submit(settings, task());

    expect(fake.requests).toHaveLength(1);
    const call = fake.requests[0];
    expect(call?.method).toBe('POST');
    expect(call?.path).toBe('/v1/images/generations');
    expect(call?.headers['authorization']).toBe(`Bearer ${fake.key}`);
    expect(call?.body).toEqual({
      model: 'gpt-image-1',
      prompt: 'a lighthouse at dawn, watercolour',
      n: 1,
      size: '1024x1024',
      quality: 'medium',
      output_format: 'png',
    });

    expect(job.id).toMatch(/^req_/);
    expect(job.done?.status).toBe('succeeded');
    expect(job.done?.outputs).toHaveLength(1);
    const image = inline(job.done?.outputs[0]);
    expect(image.mime).toBe('image/png');
    expect(image.data.subarray(0, 8)).toEqual(PNG);
    // 9 prompt tokens and 1056 medium-square image output tokens; the catalog's token lines price them.
    expect(job.done?.usage).toEqual({ input_text: 9, input_image: 0, output_image: 1056, output_text: 0 });
    expect(job.done?.cost).toBeUndefined();
    expect(fake.submissions()).toBe(1);
  });

  it('passes n, size, quality, format, background and moderation by their OpenAI names', async () => {
    const { fake, settings } = await start();
    const job = await openaiAdapter.submit(
      settings,
      task({
        count: 2,
        size: '1536x1024',
        width: 1536,
        aspectRatio: '3:2',
        parameters: { quality: 'high', output_format: 'jpeg', background: 'opaque', moderation: 'low' },
      }),
    );
    expect(fake.requests[0]?.body).toEqual({
      model: 'gpt-image-1',
      prompt: 'a lighthouse at dawn, watercolour',
      n: 2,
      size: '1536x1024',
      quality: 'high',
      output_format: 'jpeg',
      background: 'opaque',
      moderation: 'low',
    });
    expect(job.done?.outputs).toHaveLength(2);
    for (const output of job.done?.outputs ?? []) {
      const image = inline(output);
      expect(image.mime).toBe('image/jpeg');
      expect(image.data.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    }
    expect(job.done?.usage).toMatchObject({ input_text: 9, output_image: 2 * 6208 });
  });

  it('refuses what gpt-image-1 cannot take before calling it', async () => {
    const { fake, settings } = await start();
    const cases: Array<Partial<ProviderTask>> = [
      { size: '512x512' },
      { kind: 'video' },
      { count: 11 },
      { parameters: { quality: 'ultra' } },
      { parameters: { output_format: 'gif' } },
      { parameters: { output_compression: 101 } },
      { startImage: { path: '/tmp/x.png', mime: 'image/png', bytes: 10 } },
    ];
    for (const overrides of cases) {
      const err = await providerError(openaiAdapter.submit(settings, task(overrides)));
      expect(err.errorClass).toBe('invalid_input');
      expect(err.provider).toBe('openai');
      expect(err.message).toMatch(/^OpenAI/);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('passes OpenAI’s own input refusal on as invalid_input with its message', async () => {
    const { settings } = await start();
    const err = await providerError(openaiAdapter.submit(settings, task({ path: 'gpt-image-0' })));
    expect(err.errorClass).toBe('invalid_input');
    expect(err.status).toBe(400);
    expect(err.message).toContain("Invalid value: 'gpt-image-0'");
  });

  it('classes moderation_blocked as content_policy, with OpenAI’s reason', async () => {
    const { settings } = await start({ scenario: 'content_policy' });
    const err = await providerError(openaiAdapter.submit(settings, task()));
    expect(err.errorClass).toBe('content_policy');
    expect(err.status).toBe(400);
    expect(err.message).toContain('rejected by the safety system');
  });

  it('classes a refused key as auth; the key OpenAI echoes never reaches the message', async () => {
    const { fake, settings } = await start({ scenario: 'unauthorized' });
    const err = await providerError(openaiAdapter.submit(settings, task()));
    expect(err.errorClass).toBe('auth');
    expect(err.status).toBe(401);
    expect(err.message).toContain('OpenAI');
    expect(err.message).not.toContain(fake.key);
    expect(JSON.stringify(err)).not.toContain(fake.key);
    expect(String(err.stack)).not.toContain(fake.key);
  });

  it('classes 429 as rate_limited with Retry-After, answered once (no SDK retries)', async () => {
    const { fake, settings } = await start({ scenario: 'rate_limited', retryAfterSeconds: 3 });
    const err = await providerError(openaiAdapter.submit(settings, task()));
    expect(err.errorClass).toBe('rate_limited');
    expect(err.retryAfterSeconds).toBe(3);
    expect(fake.requests).toHaveLength(1);
  });

  it('classes 5xx and a failed generation as server, answered once (no SDK retries)', async () => {
    const { fake, settings } = await start({ scenario: 'server_error' });
    const overloaded = await providerError(openaiAdapter.submit(settings, task()));
    expect(overloaded.errorClass).toBe('server');
    expect(overloaded.status).toBe(503);
    fake.scenario = 'fail';
    const failed = await providerError(openaiAdapter.submit(settings, task()));
    expect(failed.errorClass).toBe('server');
    expect(failed.status).toBe(500);
    expect(fake.requests).toHaveLength(2);
  });

  it('classes JSON that does not parse, and a success without an image, as malformed', async () => {
    const { fake, settings } = await start({ scenario: 'malformed' });
    expect((await providerError(openaiAdapter.submit(settings, task()))).errorClass).toBe('malformed');
    fake.scenario = 'no_output';
    const empty = await providerError(openaiAdapter.submit(settings, task()));
    expect(empty.errorClass).toBe('malformed');
    expect(empty.message).toContain('without any image');
  });

  it('waits for a slow answer, and an aborted call ends as canceled', async () => {
    const { fake, settings } = await start({ scenario: 'slow' });
    const slow = await openaiAdapter.submit(settings, task());
    expect(slow.done?.status).toBe('succeeded');

    fake.scenario = 'cancel';
    const controller = new AbortController();
    const pending = openaiAdapter.submit(settings, task({ signal: controller.signal }));
    for (let i = 0; i < 200 && fake.submissions() < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(fake.submissions()).toBe(2);
    controller.abort();
    expect((await providerError(pending)).errorClass).toBe('canceled');
  });

  it('classes a call that outlives its own deadline as server (retryable), not canceled', async () => {
    const { settings } = await start({ scenario: 'cancel' });
    const err = await providerError(openaiAdapter.submit(settings, task({ signal: AbortSignal.timeout(100) })));
    expect(err.errorClass).toBe('server');
    expect(err.message).toContain('in time');
  });

  it('has nothing to poll or cancel: the answer was synchronous', async () => {
    const { fake, settings } = await start();
    const job = { id: 'req_1', state: {} };
    const status = await openaiAdapter.poll(settings, job, signal());
    expect(status.status).toBe('failed');
    await expect(openaiAdapter.cancel(settings, job, signal())).resolves.toBeUndefined();
    expect(fake.requests).toHaveLength(0);
    expect('webhook' in openaiAdapter).toBe(false);
  });

  it('classes an unreachable OpenAI as server', async () => {
    const { fake: closing, settings } = await start();
    await closing.close();
    fake = undefined;
    expect((await providerError(openaiAdapter.testKey(settings, signal()))).errorClass).toBe('server');
  });

  it('tests a key by reading the gpt-image-1 model record, which makes nothing', async () => {
    const { fake, settings } = await start();
    await expect(openaiAdapter.testKey(settings, signal())).resolves.toBeUndefined();
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models/gpt-image-1']);
    expect(fake.submissions()).toBe(0);

    const bad = await providerError(openaiAdapter.testKey({ ...settings, apiKey: 'sk-wrong-key-9999' }, signal()));
    expect(bad.errorClass).toBe('auth');
    expect(bad.message).not.toContain('sk-wrong-key-9999');
  });

  it('reads usage tokens by kind, output split by output_tokens_details; none without usage', () => {
    expect(
      openaiUsage({
        input_tokens: 50,
        input_tokens_details: { text_tokens: 40, image_tokens: 10 },
        output_tokens: 272,
        total_tokens: 322,
      }),
    ).toEqual({ input_text: 40, input_image: 10, output_image: 272, output_text: 0 });
    // Output tokens by kind: text output is not priced as image output.
    expect(
      openaiUsage({
        input_tokens: 20,
        input_tokens_details: { text_tokens: 20, image_tokens: 0 },
        output_tokens: 1100,
        output_tokens_details: { image_tokens: 1056, text_tokens: 44 },
        total_tokens: 1120,
      }),
    ).toEqual({ input_text: 20, input_image: 0, output_image: 1056, output_text: 44 });
    // Without details: what input does not name is text, what output does not name is image.
    expect(openaiUsage({ input_tokens: 9, output_tokens: 272 })).toEqual({
      input_text: 9,
      input_image: 0,
      output_image: 272,
      output_text: 0,
    });
    expect(openaiUsage(undefined)).toBeUndefined();
    expect(openaiUsage({ output_tokens: 1 })).toBeUndefined();
  });

  it('declares how it is reached: env key, default base URL, no webhooks, no start frames', () => {
    expect(openaiAdapter).toMatchObject({
      id: 'openai',
      envKey: 'OPENAI_API_KEY',
      defaultBaseUrl: 'https://api.openai.com/v1',
      webhooks: false,
      startImage: 'none',
    });
  });
});
