import { readFile, stat } from 'node:fs/promises';
import { pollToEnd, providerError, providerTask } from './adapter-kit.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { googleAdapter } from '../../../../../server/providers/remote/google.ts';
import type { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { AdapterSettings, ProviderTask, SubmittedJob } from '../../../../../server/providers/remote/contract.ts';
import { startGoogleFake } from '../../../../fakes/providers/google.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';
import type { RunningFake } from '../../../../fakes/providers/types.ts';

const signal = new AbortController().signal;

const task = (overrides: Partial<ProviderTask> = {}): ProviderTask =>
  providerTask({
    path: 'veo-3.0-generate-001',
    modelId: 'google/veo-3:3.0',
    prompt: 'a lighthouse at dusk, waves rolling in',
    durationSeconds: 8,
    ...overrides,
  });

describe('googleAdapter against the Gemini API fake, through @google/genai', () => {
  let fake: RunningFake;
  let settings: AdapterSettings;
  const errors: ProviderError[] = [];

  beforeEach(async () => {
    fake = await startGoogleFake({ retryAfterSeconds: 7 });
    settings = { apiKey: fake.key, baseUrl: fake.baseUrl };
  });
  afterEach(async () => {
    await fake.close();
  });

  it('describes itself as the contract asks', () => {
    expect(googleAdapter.id).toBe('google');
    expect(googleAdapter.envKey).toBe('GEMINI_API_KEY');
    expect(googleAdapter.defaultBaseUrl).toBe('https://generativelanguage.googleapis.com');
    expect(googleAdapter.webhooks).toBe(false);
    expect(googleAdapter.startImage).toBe('data_uri');
  });

  it('submits the documented predictLongRunning body, polls the operation, and returns a keyed file URI', async () => {
    const job = await googleAdapter.submit(
      settings,
      task({ parameters: { negative_prompt: 'text, watermark', person_generation: 'allow_all' } }),
    );
    expect(job.id).toMatch(/^models\/veo-3\.0-generate-001\/operations\/\w+$/);
    expect(JSON.parse(JSON.stringify(job))).toEqual(job);

    const submitted = fake.requests.find((r) => r.method === 'POST')!;
    expect(submitted.path).toBe('/v1beta/models/veo-3.0-generate-001:predictLongRunning');
    expect(submitted.headers['x-goog-api-key']).toBe(fake.key);
    expect(submitted.path).not.toContain(fake.key);
    expect(submitted.body).toEqual({
      instances: [{ prompt: 'a lighthouse at dusk, waves rolling in' }],
      parameters: {
        aspectRatio: '16:9',
        durationSeconds: 8,
        resolution: '720p',
        negativePrompt: 'text, watermark',
        personGeneration: 'allow_all',
      },
    });

    const { last: status, polls } = await pollToEnd(googleAdapter, settings, job);
    expect(polls).toBe(3);
    expect(fake.requests.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual(
      Array.from({ length: 3 }, () => `/v1beta/${job.id}`),
    );
    expect(status.status).toBe('succeeded');
    if (status.status !== 'succeeded') return;
    expect(status.outputs).toHaveLength(1);
    const output = status.outputs[0]!;
    expect('url' in output).toBe(true);
    if (!('url' in output)) return;
    expect(output.url.startsWith(`${fake.baseUrl}/v1beta/files/`)).toBe(true);
    expect(output.url).not.toContain(fake.key);
    expect(output.headers).toEqual({ 'x-goog-api-key': fake.key });

    // The file needs the key, as Google's does; with it, it is the real MP4 (with a Range too).
    expect((await fetch(output.url)).status).toBe(403);
    const file = await fetch(output.url, { headers: output.headers });
    expect(file.status).toBe(200);
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(bytes.equals(await readFile((await fakeMedia()).video.path))).toBe(true);
    const tail = await fetch(output.url, { headers: { ...output.headers, range: 'bytes=100-' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(100))).toBe(true);
  });

  it('resumes polling a persisted job without a second submission', async () => {
    const job = await googleAdapter.submit(settings, task());
    const persisted = JSON.parse(JSON.stringify(job)) as SubmittedJob;
    const { last: status } = await pollToEnd(googleAdapter, { apiKey: fake.key, baseUrl: fake.baseUrl }, persisted);
    expect(status.status).toBe('succeeded');
    expect(fake.submissions()).toBe(1);
  });

  it('sends a start image inline as base64 bytes with its MIME type', async () => {
    const image = (await fakeMedia()).image;
    const bytes = (await stat(image.path)).size;
    await googleAdapter.submit(settings, task({ startImage: { path: image.path, mime: image.mime, bytes } }));
    const body = fake.requests.find((r) => r.method === 'POST')!.body as {
      instances: Array<{ image: { bytesBase64Encoded: string; mimeType: string } }>;
    };
    expect(body.instances[0]!.image).toEqual({
      bytesBase64Encoded: (await readFile(image.path)).toString('base64'),
      mimeType: 'image/png',
    });
  });

  it('maps v1 fields per model and refuses what the model does not take, before calling Google', async () => {
    await googleAdapter.submit(
      settings,
      task({ path: 'veo-2.0-generate-001', durationSeconds: 5, aspectRatio: '9:16' }),
    );
    expect(fake.requests.at(-1)!.body).toEqual({
      instances: [{ prompt: 'a lighthouse at dusk, waves rolling in' }],
      parameters: { aspectRatio: '9:16', durationSeconds: 5 },
    });
    const before = fake.requests.length;
    const refused = [
      task({ durationSeconds: 5 }),
      task({ aspectRatio: '1:1' }),
      task({ size: '480p' }),
      task({ size: '1080p', aspectRatio: '9:16' }),
      task({ kind: 'image' }),
      task({ parameters: { person_generation: 'everyone' } }),
      task({ startImage: { path: '/nonexistent.gif', mime: 'image/gif', bytes: 10 } }),
    ];
    for (const t of refused) {
      const err = await providerError(googleAdapter.submit(settings, t));
      expect(err.errorClass).toBe('invalid_input');
      expect(err.message).toContain('Google');
    }
    expect(fake.requests.length).toBe(before);
  });

  it('passes a model path it has no rules for straight through, and classifies Google’s refusals', async () => {
    const unknown = await providerError(googleAdapter.submit(settings, task({ path: 'veo-9.9-imaginary' })));
    expect(unknown.errorClass).toBe('failed');
    expect(unknown.status).toBe(404);
    expect(fake.requests.at(-1)!.path).toBe('/v1beta/models/veo-9.9-imaginary:predictLongRunning');
    // Google's own 400 INVALID_ARGUMENT is invalid input, with Google's message.
    const empty = await providerError(
      googleAdapter.submit(settings, task({ prompt: '', inputSchema: { schema: {} } })),
    );
    expect(empty.errorClass).toBe('invalid_input');
    expect(empty.status).toBe(400);
    expect(empty.message).toContain('A prompt is required');
    expect(fake.submissions()).toBe(0);
  });

  it('reports a failed operation as failed', async () => {
    fake.scenario = 'fail';
    const { last: status } = await pollToEnd(googleAdapter, settings, await googleAdapter.submit(settings, task()));
    expect(status.status).toBe('failed');
    if (status.status !== 'failed') return;
    expect(status.error.errorClass).toBe('failed');
    expect(status.error.message).toContain('internal error');
  });

  it('reports an operation cancelled at Google as canceled', async () => {
    fake.scenario = 'cancel';
    const { last: status } = await pollToEnd(googleAdapter, settings, await googleAdapter.submit(settings, task()));
    expect(status).toEqual({ status: 'canceled' });
  });

  it('reports raiMediaFilteredReasons as a content-policy refusal with Google’s reason', async () => {
    fake.scenario = 'content_policy';
    const { last: status } = await pollToEnd(googleAdapter, settings, await googleAdapter.submit(settings, task()));
    expect(status.status).toBe('failed');
    if (status.status !== 'failed') return;
    expect(status.error.errorClass).toBe('content_policy');
    expect(status.error.message).toContain('try rephrasing your prompt');
  });

  it('reports a finished operation without a video as malformed', async () => {
    fake.scenario = 'no_output';
    const { last: status } = await pollToEnd(googleAdapter, settings, await googleAdapter.submit(settings, task()));
    expect(status.status).toBe('failed');
    if (status.status !== 'failed') return;
    expect(status.error.errorClass).toBe('malformed');
  });

  it('keeps a slow operation running', async () => {
    fake.scenario = 'slow';
    const job = await googleAdapter.submit(settings, task());
    for (let i = 0; i < 6; i += 1)
      expect(await googleAdapter.poll(settings, job, signal)).toEqual({ status: 'running' });
  });

  it('classifies submit failures: 401, 429 with Retry-After, 5xx, unparsable JSON', async () => {
    const cases = [
      ['unauthorized', 'auth', 401],
      ['rate_limited', 'rate_limited', 429],
      ['server_error', 'server', 503],
    ] as const;
    for (const [scenario, errorClass, status] of cases) {
      fake.scenario = scenario;
      const err = await providerError(googleAdapter.submit(settings, task()));
      errors.push(err);
      expect(err.errorClass).toBe(errorClass);
      expect(err.status).toBe(status);
      expect(err.provider).toBe('google');
      expect(err.message).toContain('Google');
      if (scenario === 'rate_limited') expect(err.retryAfterSeconds).toBe(7);
      if (scenario === 'unauthorized') expect(err.message).toContain('refused the key');
    }
    fake.scenario = 'malformed';
    const malformed = await providerError(googleAdapter.submit(settings, task()));
    expect(malformed.errorClass).toBe('malformed');
    errors.push(malformed);
    expect(fake.submissions()).toBe(0);
  });

  it('takes the wait from RetryInfo when Google sends no Retry-After header', async () => {
    // A proxy that drops the header: only the body's google.rpc.RetryInfo remains.
    const { createServer } = await import('node:http');
    const proxy = createServer((req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            code: 429,
            message: 'Quota exceeded',
            status: 'RESOURCE_EXHAUSTED',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '31s' }],
          },
        }),
      );
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as { port: number }).port;
      const err = await providerError(
        googleAdapter.submit({ apiKey: fake.key, baseUrl: `http://127.0.0.1:${port}` }, task()),
      );
      expect(err.errorClass).toBe('rate_limited');
      expect(err.retryAfterSeconds).toBe(31);
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('tests a key with one models list call: good, wrong (API_KEY_INVALID), revoked (401)', async () => {
    await expect(googleAdapter.testKey(settings, signal)).resolves.toBeUndefined();
    const list = fake.requests.at(-1)!;
    expect(list.method).toBe('GET');
    expect(list.path).toMatch(/^\/v1beta\/models\?pageSize=1$/);
    expect(fake.submissions()).toBe(0);

    const wrongKey = 'AIzaSy-wrong-key-9999';
    const wrong = await providerError(googleAdapter.testKey({ apiKey: wrongKey, baseUrl: fake.baseUrl }, signal));
    expect(wrong.errorClass).toBe('auth');
    expect(wrong.message).toContain('refused the key');
    expect(wrong.message).not.toContain(wrongKey);
    expect(String(wrong.stack)).not.toContain(wrongKey);

    fake.scenario = 'unauthorized';
    const revoked = await providerError(googleAdapter.testKey(settings, signal));
    expect(revoked.errorClass).toBe('auth');
    errors.push(wrong, revoked);
  });

  it('classifies an unreachable API as a server error', async () => {
    const closed = await startGoogleFake();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const err = await providerError(googleAdapter.testKey({ apiKey: fake.key, baseUrl }, signal));
    expect(err.errorClass).toBe('server');
    expect(err.message).toContain('Google');
  });

  it('cancel is a documented no-op: the Gemini API has no cancel for Veo operations', async () => {
    const job = await googleAdapter.submit(settings, task());
    const before = fake.requests.length;
    await expect(googleAdapter.cancel(settings, job, signal)).resolves.toBeUndefined();
    expect(fake.requests.length).toBe(before);
  });

  it('reports an aborted call (the runner gave up) as canceled', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await providerError(googleAdapter.testKey(settings, controller.signal));
    expect(err.errorClass).toBe('canceled');
  });

  it('sends the key only to the API host: a video URI on another host is refused', async () => {
    const { createServer } = await import('node:http');
    const done = {
      name: 'models/veo-3.0-generate-001/operations/elsewhere',
      done: true,
      response: {
        generateVideoResponse: {
          generatedSamples: [{ video: { uri: 'https://collector.example/v1beta/files/x:download' } }],
        },
      },
    };
    const proxy = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(done));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as { port: number }).port;
      const elsewhere = { apiKey: fake.key, baseUrl: `http://127.0.0.1:${port}` };
      const err = await providerError(googleAdapter.poll(elsewhere, { id: done.name, state: {} }, signal));
      expect(err.errorClass).toBe('malformed');
      expect(err.message).toContain('collector.example');
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('never puts the key into an error message', () => {
    expect(errors.length).toBeGreaterThan(0);
    for (const err of errors) expect(err.message).not.toContain(fake.key);
  });
});
