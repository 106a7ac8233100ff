import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTING_EXAMPLE } from '../../../server/providers/model-definitions.ts';
import { SMALL_VIDEO, makePng, startTestService, single } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/** An uploaded PNG: its URL is a valid image_url served by the service itself. */
async function uploadedImage(t: TestService, c: TestClient): Promise<string> {
  const png = await readFile(await makePng(t.dataDir, 'route.png'));
  const ticket = await c.call('POST', '/media/upload', { filename: 'route.png', mime: 'image/png', size: png.length });
  const put = await fetch(String(ticket.body.result.uploadUrl), {
    method: 'PUT',
    body: new Uint8Array(png),
    headers: ticket.body.result.headers as Record<string, string>,
  });
  expect(put.status).toBe(200);
  const done = await c.call('POST', `/media/${ticket.body.result.id}`);
  expect(done.status).toBe(200);
  return single(done.body).url;
}

describe('routing modes pick different providers (real providers, real renders)', () => {
  let t: TestService;
  let c: TestClient;
  let image = '';
  beforeAll(async () => {
    t = await startTestService();
    c = await t.client('router', 'pro');
    image = await uploadedImage(t, c);
  });
  afterAll(async () => {
    await t.stop();
  });

  // The documented example, at 360p to keep renders small (the same providers offer it).
  it.each(Object.entries(ROUTING_EXAMPLE.expected))('%s → %s', async (routing, expected) => {
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'a lighthouse at dusk',
      image_url: image,
      routing,
    });
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe(expected);
    expect(res.body.stats.routing).toBe(routing);
    expect(res.body.stats.ignoredParameters).toEqual(routing === 'cheapest' ? ['image_url'] : []);
    expect(res.body.data[0].provider).toBe(res.body.stats.providerId);
  });

  it('an explicit provider bypasses routing; one that cannot honour a parameter is 422', async () => {
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'explicit prism',
      provider: 'prism',
    });
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('prism');
    const cannot = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'x',
      provider: 'swift',
      image_url: image,
    });
    expect(cannot.status).toBe(422);
    expect(cannot.body.code).toBe('unsupported_parameter');
    const size = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'x',
      provider: 'swift',
      size: '1080p',
    });
    expect(size.status).toBe(422);
  });

  it('compatible with a parameter only some providers honour picks one that does, at a higher price', async () => {
    const res = await c.call('POST', '/videos/generations', {
      model: 'clipdesk/drift',
      size: '360p',
      duration: 3,
      prompt: 'neon drift',
      style: 'neon',
      routing: 'compatible',
    });
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('studio');
  });
});

describe('parameters the model does not have are never dropped silently', () => {
  let t: TestService;
  let c: TestClient;
  beforeAll(async () => {
    t = await startTestService();
    c = await t.client('unknown-params', 'pro');
  });
  afterAll(async () => {
    await t.stop();
  });
  const image = { model: 'clipdesk/still', size: '256x256', prompt: 'a quiet harbour' };
  const extras = { camera_motion: 'orbit', negative_prompt: 'fog' };

  it('compatible refuses them with 422 unsupported_parameter naming each', async () => {
    const res = await c.call('POST', '/images/generations', { ...image, ...extras, routing: 'compatible' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('unsupported_parameter');
    expect(res.body.message).toContain('camera_motion');
    expect(res.body.message).toContain('negative_prompt');
  });

  it('an explicit provider refuses them too', async () => {
    const res = await c.call('POST', '/images/generations', { ...image, camera_motion: 'orbit', provider: 'prism' });
    expect(res.status).toBe(422);
    expect(res.body.message).toContain('camera_motion');
  });

  it.each(['optimal', 'cheapest'])('%s renders and lists them in stats.ignoredParameters', async (routing) => {
    const res = await c.call('POST', '/images/generations', { ...image, ...extras, routing });
    expect(res.status).toBe(200);
    expect(res.body.stats.ignoredParameters).toEqual(['camera_motion', 'negative_prompt']);
  });

  it('the model’s own parameters and the interface’s fields are not unknown', async () => {
    const res = await c.call('POST', '/images/generations', { ...image, style: 'noir', n: 1, routing: 'compatible' });
    expect(res.status).toBe(200);
    expect(res.body.stats.ignoredParameters).toEqual([]);
  });
});

describe('fallbacks with --fail-provider', () => {
  let t: TestService;
  let c: TestClient;
  beforeAll(async () => {
    t = await startTestService({ failProviders: ['swift'] });
    c = await t.client('fallback', 'pro');
  });
  afterAll(async () => {
    await t.stop();
  });

  it('the failing provider is listed unavailable', async () => {
    const res = await c.call('GET', '/providers/swift');
    expect(res.body.result.status).toBe('unavailable');
    expect((await c.call('GET', '/providers/studio')).body.result.status).toBe('available');
  });

  it('cheapest falls back to the next provider in its ranking and counts the retry', async () => {
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'fallback please',
      routing: 'cheapest',
    });
    expect(res.status).toBe(200);
    expect(res.body.stats.retries).toBe(1);
    expect(res.body.stats.providerSlug).toBe('studio');
  });

  it('an explicit failing provider is 503 provider_unavailable, and nothing is stored or charged', async () => {
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'only swift',
      provider: 'swift',
    });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('provider_unavailable');
    expect((await c.call('GET', '/media?search=only%20swift')).body.result.total).toBe(0);
  });

  it('when every provider fails the answer is 503', async () => {
    const all = await startTestService({ failProviders: ['swift', 'studio', 'local-prism'] });
    try {
      const k = await all.client('doomed');
      const res = await k.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'nobody home' });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('provider_unavailable');
      expect(res.body.message).toMatch(/every provider/);
      expect((await k.call('GET', '/usage')).body.result.usage.cost.total).toBe(0);
    } finally {
      await all.stop();
    }
  });
});
