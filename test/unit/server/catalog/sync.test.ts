import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFalListing } from '../../../../server/catalog/sync/fal-listing.ts';
import { fetchListing, ListingError, plainText } from '../../../../server/catalog/sync/fetch-json.ts';
import { readInputSchema } from '../../../../server/catalog/sync/input-schema.ts';
import { resolveInputSchema } from '../../../../server/catalog/sync/listing.ts';
import type { ListedModel } from '../../../../server/catalog/sync/listing.ts';
import { catalogIdFor, providerModelMap } from '../../../../server/catalog/sync/mapping.ts';
import { catalogPrice } from '../../../../server/catalog/sync/prices.ts';
import { mappedInput } from '../../../../server/providers/remote/mapped-input.ts';
import { startFalPlatformFake } from '../../../fakes/providers/fal-platform.ts';
import type { FalPlatformFake } from '../../../fakes/providers/fal-platform.ts';
import { FAL_LISTING, falModel, replicateModel } from '../../../fakes/providers/listings.ts';

/** A listed model from the fakes' fixtures, read as the sync reads it. */
function falListed(id: string): ListedModel {
  const entry = FAL_LISTING.find((e) => e.id === id)!;
  const model = falModel(entry) as { openapi: { paths: Record<string, { post: unknown }> } };
  const post = model.openapi.paths[`/${id}`]!.post as {
    requestBody: { content: { 'application/json': { schema: unknown } } };
  };
  const input = resolveInputSchema(model.openapi, post.requestBody.content['application/json'].schema)!;
  const task = entry.category === 'image-to-video' ? 'image_to_video' : 'text_to_video';
  return { provider: 'fal', id, task, name: entry.name, description: '', input, page: '' };
}

describe('mapping table', () => {
  const map = providerModelMap();
  it('maps listed models onto catalog ids; an unmapped one is its owner and the rest', () => {
    const at = (provider: 'fal' | 'replicate', id: string) => catalogIdFor(map, { provider, id } as ListedModel);
    expect(at('fal', 'fal-ai/kling-video/v2.5-turbo/pro/image-to-video')).toBe('kling/v2.5-turbo-pro');
    expect(at('replicate', 'kwaivgi/kling-v2.5-turbo-pro')).toBe('kling/v2.5-turbo-pro');
    expect(at('fal', 'fal-ai/pixverse/v4.5/text-to-video')).toBe('fal-ai/pixverse-v4.5');
    expect(at('fal', 'fal-ai/veo3.1/image-to-video')).toBe('fal-ai/veo3.1');
    expect(at('replicate', 'lightricks/ltx-video')).toBe('lightricks/ltx-video');
  });
});

describe('input schema → parameters and inputs', () => {
  it("reads Replicate's Kling: start frame, integer durations, own parameters with their rules", () => {
    const model = replicateModel({ id: 'kwaivgi/kling-v2.1', description: '', schema: 'r-kling' }) as {
      latest_version: { openapi_schema: { components: { schemas: { Input: unknown } } } };
    };
    const schema = model.latest_version.openapi_schema;
    const input = resolveInputSchema(schema, schema.components.schemas.Input)!;
    const reading = readInputSchema({
      provider: 'replicate',
      id: 'kwaivgi/kling-v2.1',
      task: 'image_to_video',
      name: '',
      description: '',
      input,
      page: '',
    });
    expect(reading.inputs).toMatchObject({ image_url: { name: 'start_image' }, duration: { format: 'number' } });
    expect(reading.parameters['duration']).toEqual({ min: 5, max: 10, default: 5, values: [5, 10] });
    expect(reading.own).toEqual(['negative_prompt', 'mode']);
    expect(reading.parameters['mode']).toMatchObject({
      type: 'string',
      values: ['standard', 'pro'],
      default: 'standard',
    });
    expect(reading.features).toEqual(['image_to_video']);
  });

  it("reads fal's Veo 3: seconds with a unit, its resolutions, audio, seed", () => {
    const reading = readInputSchema(falListed('fal-ai/veo3'));
    expect(reading.inputs.duration).toEqual({ name: 'duration', format: 'seconds' });
    expect(reading.sizes).toEqual(['720p', '1080p']);
    expect(reading.features).toEqual(['text_to_video', 'audio', 'seed']);
    expect(reading.own).toContain('negative_prompt');
    expect(reading.own).not.toContain('generate_audio');
  });

  it('builds the body under the model’s own names', () => {
    const reading = readInputSchema(falListed('fal-ai/minimax/hailuo-02/standard/image-to-video'));
    const body = mappedInput(
      {
        kind: 'video',
        prompt: 'a kite',
        size: '768p',
        width: 1280,
        height: 720,
        aspectRatio: '16:9',
        durationSeconds: 10,
        count: 1,
        parameters: { prompt_optimizer: false },
        path: 'fal-ai/minimax/hailuo-02/standard/image-to-video',
        modelId: 'minimax/hailuo-02:1',
        signal: AbortSignal.timeout(1000),
      },
      reading.inputs,
      'https://files.example/frame.png',
    );
    expect(body).toEqual({
      prompt: 'a kite',
      duration: '10',
      image_url: 'https://files.example/frame.png',
      prompt_optimizer: false,
    });
  });
});

describe('prices in the catalog’s units', () => {
  it('per second, per video at one length, per image, per megapixel; other units are no price', () => {
    expect(catalogPrice({ usd: 0.4, unit: 'seconds' }, 'video', {})).toEqual({
      price: 0.4,
      prices: [{ unit: 'second', usd: 0.4 }],
    });
    expect(catalogPrice({ usd: 0.5, unit: 'videos' }, 'video', { duration: 5 })).toEqual({
      price: 0.1,
      prices: [{ unit: 'video', usd: 0.5, duration: 5 }],
      durations: [5],
    });
    expect(catalogPrice({ usd: 0.04, unit: 'images' }, 'image', {})).toMatchObject({ price: 0.04 });
    // fal bills whole megapixels, rounded up: 1024x1024 is two (sync-prices.test.ts has every unit).
    expect(catalogPrice({ usd: 0.025, unit: 'megapixels' }, 'image', { width: 1024, height: 1024 })).toEqual({
      price: 0.05,
      prices: [{ unit: 'megapixel', usd: 0.025, rounding: 'up' }],
    });
    expect(catalogPrice({ usd: 0.001, unit: 'gpu_seconds' }, 'video', {})).toEqual({ unpricedUnit: 'gpu_seconds' });
  });
});

describe('untrusted listings', () => {
  let base = '';
  const server = createServer((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`"${'x'.repeat(300_000)}"`);
    } else if (req.url === '/silent') {
      // Never answers: the time limit ends it.
    } else res.writeHead(401).end();
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const request = { name: 'fal', apiKey: 'k-secret-1234', authorization: 'Key k-secret-1234' };

  it('a size limit, a time limit, a refused key said without it', async () => {
    const limits = { maxBytes: 100_000, timeoutMs: 300 };
    await expect(fetchListing(`${base}/big`, request, limits)).rejects.toThrow(/larger than 100000 bytes/);
    await expect(fetchListing(`${base}/silent`, request, limits)).rejects.toThrow(/did not answer/);
    const refused = await fetchListing(`${base}/key`, request, limits).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ListingError);
    expect((refused as Error).message).toBe('fal refused the key (HTTP 401)');
  });

  it('text is plain text: no markup, no control characters, bounded', () => {
    expect(plainText('<i>Hi</i>\u0000 there\n\nnow', 100)).toBe('Hi there now');
    expect(plainText('a'.repeat(50), 10)).toHaveLength(10);
  });
});

describe("fal's platform API", () => {
  let fake: FalPlatformFake;
  beforeAll(async () => {
    fake = await startFalPlatformFake();
  });
  afterAll(() => fake.close());

  it('follows every cursor, asks prices 50 ids at most, and leaves out what it cannot use', async () => {
    const limits = { maxBytes: 8 * 1024 * 1024, timeoutMs: 10_000 };
    const listing = await readFalListing({ baseUrl: fake.baseUrl, apiKey: fake.key, limits });
    const active = FAL_LISTING.filter((e) => (e.status ?? 'active') === 'active');
    expect(listing.models).toHaveLength(active.length);
    expect(listing.prices).toBe(active.filter((e) => e.price).length);
    const pricing = fake.requests.filter((r) => r.path.startsWith('/v1/models/pricing'));
    for (const r of pricing)
      expect(new URL(r.path, 'http://x').searchParams.getAll('endpoint_id').length).toBeLessThanOrEqual(50);
    expect(fake.requests.filter((r) => r.path.includes('cursor=')).length).toBeGreaterThan(3);
    expect(fake.requests.every((r) => r.headers.authorization === `Key ${fake.key}`)).toBe(true);
  });
});
