import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  builtinCatalog,
  CatalogFileError,
  loadCatalog,
  OPERATOR_CATALOG_FILE,
  toDefinitions,
} from '../../../../server/providers/catalog-file/load.ts';
import { parseJsonWithPositions, positionOf } from '../../../../server/providers/catalog-file/json-positions.ts';
import {
  defaultSize,
  offerPath,
  sizeDimensions,
  videoDefaultSize,
} from '../../../../server/providers/model-definitions.ts';

/** The provider model paths every adapter supports (COMMON.md), exactly. */
const PATHS: Record<string, string[]> = {
  fal: [
    'fal-ai/kling-video/v2.1/master/text-to-video',
    'fal-ai/kling-video/v2.1/standard/image-to-video',
    'fal-ai/veo3',
    'fal-ai/veo3/fast',
    'fal-ai/veo3/image-to-video',
    'fal-ai/wan/v2.2-a14b/text-to-video',
    'fal-ai/wan/v2.2-a14b/image-to-video',
    'fal-ai/minimax/hailuo-02/standard/text-to-video',
    'fal-ai/minimax/hailuo-02/standard/image-to-video',
    'fal-ai/bytedance/seedance/v1/lite/text-to-video',
    'fal-ai/bytedance/seedance/v1/lite/image-to-video',
    'fal-ai/luma-dream-machine/ray-2',
    'fal-ai/luma-dream-machine/ray-2/image-to-video',
    'fal-ai/flux/dev',
    'fal-ai/flux/schnell',
    'fal-ai/flux-pro/v1.1',
  ],
  replicate: [
    'kwaivgi/kling-v2.1',
    'google/veo-3',
    'google/veo-3-fast',
    'wan-video/wan-2.2-t2v-fast',
    'wan-video/wan-2.2-i2v-fast',
    'minimax/hailuo-02',
    'bytedance/seedance-1-lite',
    'luma/ray-2-720p',
    'black-forest-labs/flux-dev',
    'black-forest-labs/flux-schnell',
    'black-forest-labs/flux-1.1-pro',
  ],
  google: ['veo-3.0-generate-001', 'veo-3.0-fast-generate-001', 'veo-2.0-generate-001'],
  runway: ['gen4_turbo'],
  luma: ['ray-2', 'ray-flash-2'],
  openai: ['gpt-image-1'],
};

describe('the built-in catalog', () => {
  const file = builtinCatalog();
  const offer = (model: string, provider: string) =>
    file.models.find((m) => m.id === model)?.offers.find((o) => o.provider === provider);

  it('parses, and its offers use exactly the documented provider model paths', () => {
    const used: Record<string, Set<string>> = {};
    for (const m of file.models) {
      for (const o of m.offers) {
        const paths = typeof o.path === 'string' ? [o.path] : Object.values(o.path);
        for (const p of paths) (used[o.provider] ??= new Set()).add(p);
        expect(o.priceSource).toMatch(/^https:\/\//);
        expect(o.priceAsOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
    }
    for (const [provider, paths] of Object.entries(PATHS))
      expect([...(used[provider] ?? [])].sort()).toEqual([...paths].sort());
  });

  it('offers the required models, many on two providers', () => {
    for (const [model, providers] of Object.entries({
      'kling/v2.1': ['fal', 'replicate'],
      'google/veo-3': ['fal', 'replicate', 'google'],
      'google/veo-3-fast': ['fal', 'replicate', 'google'],
      'wan/v2.2': ['fal', 'replicate'],
      'minimax/hailuo-02': ['fal', 'replicate'],
      'bytedance/seedance-1-lite': ['fal', 'replicate'],
      'luma/ray-2': ['luma', 'fal', 'replicate'],
      'runway/gen-4-turbo': ['runway'],
      'openai/gpt-image-1': ['openai'],
      'bfl/flux-dev': ['fal', 'replicate'],
      'bfl/flux-schnell': ['fal', 'replicate'],
      'bfl/flux-1.1-pro': ['fal', 'replicate'],
    })) {
      for (const p of providers) expect(offer(model, p), `${model} on ${p}`).toBeDefined();
    }
  });

  it('records what each provider really does: fixed durations, image-to-video only, sound', () => {
    expect(offer('kling/v2.1', 'fal')?.durations).toEqual([5, 10]);
    expect(offer('google/veo-3', 'google')?.durations).toEqual([8]);
    expect(offer('runway/gen-4-turbo', 'runway')?.features).not.toContain('text_to_video');
    expect(offer('runway/gen-4-turbo', 'runway')?.durations).toEqual([5, 10]);
    for (const p of ['fal', 'replicate', 'google']) expect(offer('google/veo-3', p)?.features).toContain('audio');
    expect(file.models.find((m) => m.id === 'google/veo-3')?.parameters['audio']).toMatchObject({ type: 'boolean' });
    const veo = offer('google/veo-3', 'fal');
    expect(veo && offerPath({ ...veo, model: 'google/veo-3' }, 'image_to_video')).toBe('fal-ai/veo3/image-to-video');
  });

  it('turns into model definitions and per-provider offers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-catalog-'));
    try {
      const loaded = await loadCatalog(dir);
      expect(loaded.models.find((m) => m.id === 'kling/v2.1')).toMatchObject({
        base: 'kling',
        slug: 'v2.1',
        versions: ['1'],
      });
      expect(loaded.offers.runway.map((o) => o.model)).toEqual(['runway/gen-4-turbo']);
      const unverified = loaded.offers.fal.find((o) => o.model === 'bfl/flux-schnell');
      expect(unverified?.priceNote).toMatch(/not in the stored copies/);
      expect(loaded.offers.fal.find((o) => o.model === 'google/veo-3-fast')?.priceNote).toBeUndefined();
      // Price tables come through (docs/providers.md, "Prices").
      expect(loaded.offers.fal.find((o) => o.model === 'google/veo-3')?.prices).toEqual([
        { unit: 'second', usd: 0.2, audio: false },
        { unit: 'second', usd: 0.4, audio: true },
      ]);
      expect(loaded.offers.runway[0]?.prices).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('default video sizes', () => {
  it('1080p where the model offers it (Veo 3), else its largest size; a file without one gets the rule', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-catalog-'));
    try {
      await writeFile(
        join(dir, OPERATOR_CATALOG_FILE),
        JSON.stringify({
          version: 1,
          models: [{ id: 'wan/v2.2', parameters: { size: { values: ['480p', '720p'] } } }],
        }),
      );
      const loaded = await loadCatalog(dir);
      const byId = new Map(loaded.models.map((m) => [m.id, m]));
      expect(defaultSize(byId.get('google/veo-3')!)).toBe('1080p');
      expect(defaultSize(byId.get('google/veo-3-fast')!)).toBe('1080p');
      expect(byId.get('wan/v2.2')!.parameters.size?.default).toBe('720p');
      for (const model of loaded.models.filter((m) => m.media === 'video')) {
        const values = model.parameters.size?.values ?? [];
        const expected = values.includes('1080p') ? '1080p' : values.at(-1);
        expect(defaultSize(model), model.id).toBe(expected);
      }
      expect(videoDefaultSize(['720p', '360p', '480p'])).toBe('720p');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the operator catalog file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-catalog-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const write = (text: string) => writeFile(join(dir, OPERATOR_CATALOG_FILE), text);
  const failure = async (): Promise<CatalogFileError> => {
    const error = await loadCatalog(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CatalogFileError);
    return error as CatalogFileError;
  };

  it('changes a price and adds a model and an offer, without code changes', async () => {
    await write(
      JSON.stringify(
        {
          version: 1,
          models: [
            { id: 'kling/v2.1', offers: [{ provider: 'fal', price: 0.042, priceAsOf: '2026-12-01' }] },
            {
              id: 'google/veo-3',
              offers: [
                {
                  provider: 'fal',
                  price: 0.5,
                  priceAsOf: '2026-12-01',
                  prices: [{ unit: 'second', usd: 0.5, size: '1080p' }],
                },
              ],
            },
            {
              id: 'acme/clip-1',
              name: 'Acme Clip 1',
              description: 'An operator-added model.',
              media: 'video',
              parameters: { duration: { min: 4, max: 4, default: 4 }, size: { values: ['720p'], default: '720p' } },
              offers: [
                {
                  provider: 'replicate',
                  path: 'acme/clip-1',
                  price: 0.01,
                  priceAsOf: '2026-12-01',
                  priceSource: 'https://replicate.com/acme/clip-1',
                  features: ['text_to_video'],
                  sizes: ['720p'],
                },
              ],
            },
          ],
        },
        null,
        2,
      ),
    );
    const loaded = await loadCatalog(dir);
    const kling = loaded.offers.fal.find((o) => o.model === 'kling/v2.1');
    expect(kling).toMatchObject({ price: 0.042, priceAsOf: '2026-12-01' });
    expect(kling?.priceNote).toBeUndefined();
    // The built-in table was read with the old price: a new price without a table drops it.
    expect(kling?.prices).toBeUndefined();
    expect(loaded.offers.fal.find((o) => o.model === 'google/veo-3')?.prices).toEqual([
      { unit: 'second', usd: 0.5, size: '1080p' },
    ]);
    // Fields the operator did not name are kept.
    expect(kling?.path).toMatchObject({ text_to_video: 'fal-ai/kling-video/v2.1/master/text-to-video' });
    expect(loaded.offers.replicate.find((o) => o.model === 'acme/clip-1')?.price).toBe(0.01);
    expect(loaded.models.some((m) => m.id === 'acme/clip-1')).toBe(true);
    expect(loaded.models.some((m) => m.id === 'google/veo-3')).toBe(true);
  });

  it('a syntax error stops with the file, line and column', async () => {
    await write('{\n  "version": 1,\n  "models": [\n    { "id": "kling/v2.1" }\n    { "id": "wan/v2.2" }\n  ]\n}\n');
    const error = await failure();
    expect(error.file).toBe(join(dir, OPERATOR_CATALOG_FILE));
    expect(error).toMatchObject({ line: 5, column: 5 });
    expect(error.message).toContain(`${join(dir, OPERATOR_CATALOG_FILE)}:5:5`);
  });

  it('a file cut short reports where it ends', async () => {
    await write('{\n  "version": 1,\n  "models": [\n');
    expect(await failure()).toMatchObject({ line: 4, column: 1 });
  });

  it('a schema error names the line of the offending value', async () => {
    await write(
      '{\n  "version": 1,\n  "models": [\n    {\n      "id": "kling/v2.1",\n      "offers": [\n        { "provider": "fal",\n          "price": "cheap" }\n      ]\n    }\n  ]\n}\n',
    );
    const error = await failure();
    expect(error.line).toBe(8);
    expect(error.message).toMatch(/models\[0\]\.offers\[0\]\.price/);
  });

  it('a price line without what its unit needs is refused where it is', async () => {
    await write(
      '{\n  "version": 1,\n  "models": [\n    { "id": "luma/ray-2",\n      "offers": [ { "provider": "fal", "price": 0.2, "priceAsOf": "2026-12-06",\n        "prices": [ { "unit": "block", "usd": 0.5 } ] } ] }\n  ]\n}\n',
    );
    const error = await failure();
    expect(error.message).toMatch(/models\[0\]\.offers\[0\]\.prices\[0\]: a block line needs blockSeconds/);
    expect(error.line).toBe(6);
  });

  it('a model parameter rule of the wrong shape is refused where it is', async () => {
    await write(
      '{\n  "version": 1,\n  "models": [\n    { "id": "kling/v2.1",\n      "parameters": {\n        "cfg_scale": { "type": "float" } } }\n  ]\n}\n',
    );
    const error = await failure();
    expect(error.message).toMatch(/parameters\.cfg_scale\.type/);
    expect(error.line).toBe(6);
  });

  it('an image parameter other than the end frame is refused where it is (a provider would get our URL)', async () => {
    await write(
      '{\n  "version": 1,\n  "models": [\n    { "id": "kling/v2.1",\n      "parameters": {\n        "mask_url": { "type": "image" } } }\n  ]\n}\n',
    );
    const error = await failure();
    expect(error.message).toMatch(/parameters\.mask_url: only end_image_url \(the end frame\) can be of type image/);
    expect(error.line).toBe(6);
  });

  it('a changed price needs the day it was read', async () => {
    await write(
      '{\n  "version": 1,\n  "models": [\n    { "id": "kling/v2.1",\n      "offers": [ { "provider": "fal", "price": 0.04 } ] }\n  ]\n}\n',
    );
    const error = await failure();
    expect(error.message).toContain('priceAsOf');
    expect(error.line).toBe(5);
  });

  it('a new model must be complete, and offers must agree with their model', async () => {
    await write('{\n  "version": 1,\n  "models": [\n    { "id": "acme/half", "name": "Half" }\n  ]\n}\n');
    expect((await failure()).line).toBe(4);
    await write(
      '{\n  "version": 1,\n  "models": [\n    { "id": "kling/v2.1",\n      "offers": [ { "provider": "fal", "durations": [30] } ] }\n  ]\n}\n',
    );
    const error = await failure();
    expect(error.message).toMatch(/durations outside/);
    expect(error.line).toBe(4);
  });
});

describe('parseJsonWithPositions', () => {
  it('parses what JSON.parse parses and knows where each value is', () => {
    const text = '{\n  "a": [1, {"b": "x\\"y"}],\n  "c": -1.5e2, "d": true, "e": null\n}';
    const parsed = parseJsonWithPositions(text);
    expect(parsed.value).toEqual(JSON.parse(text));
    expect(positionOf(parsed, ['a', 1, 'b'])).toEqual({ line: 2, column: 13 });
    expect(positionOf(parsed, ['c'])).toEqual({ line: 3, column: 3 });
    expect(positionOf(parsed, ['nope', 'deeper'])).toEqual({ line: 1, column: 1 });
  });

  it('refuses what JSON refuses', () => {
    for (const bad of ['', '{', '[1,]', '{"a" 1}', "{'a': 1}", '{"a": 1} x', '"unterminated', 'nul', '01']) {
      expect(() => parseJsonWithPositions(bad), bad).toThrow();
    }
  });
});

describe('sizes of AI image models', () => {
  it('a size rule without bounds is a closed list; one with bounds takes any size within them', () => {
    const models = toDefinitions(builtinCatalog()).models;
    const gpt = models.find((m) => m.id === 'openai/gpt-image-1')!;
    expect(sizeDimensions(gpt, '1536x1024')).toEqual({ width: 1536, height: 1024 });
    expect(sizeDimensions(gpt, '512x512')).toBeUndefined();
    const flux = models.find((m) => m.id === 'bfl/flux-dev')!;
    expect(sizeDimensions(flux, '800x600')).toEqual({ width: 800, height: 600 });
    expect(sizeDimensions(flux, '2048x2048')).toBeUndefined();
  });
});
