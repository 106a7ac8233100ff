import { describe, expect, it } from 'vitest';
import type { UnpricedModel } from '../../../../shared/api/index.ts';
import { buildOperatorDocument } from '../../../../server/catalog/sync/build.ts';
import type { OperatorDocument } from '../../../../server/catalog/sync/build.ts';
import { resolveInputSchema } from '../../../../server/catalog/sync/listing.ts';
import type { ListedModel, ListedPrice } from '../../../../server/catalog/sync/listing.ts';
import { providerModelMap } from '../../../../server/catalog/sync/mapping.ts';
import { catalogPrice } from '../../../../server/catalog/sync/prices.ts';
import { describeReport } from '../../../../server/cli/catalog.ts';
import {
  builtinCatalog,
  mergeOperatorCatalog,
  parseOperatorCatalog,
} from '../../../../server/providers/catalog-file/load.ts';
import { FAL_LISTING, falModel } from '../../../fakes/providers/listings.ts';

/**
 * The sync's prices (docs/providers.md, "Syncing the catalog"): every unit fal lists maps into the
 * catalog's price model, or the model is reported unpriced with the unit named; a built-in table
 * is never flattened into one listed number.
 */
describe('every unit fal lists, in the catalog’s units', () => {
  const video = (usd: number, unit: string) => catalogPrice({ usd, unit }, 'video', { duration: 5 });
  const image = (usd: number, unit: string) => catalogPrice({ usd, unit }, 'image', { width: 1024, height: 1024 });

  it.each<[string, ReturnType<typeof catalogPrice>, unknown]>([
    ['seconds', video(0.4, 'seconds'), { price: 0.4, prices: [{ unit: 'second', usd: 0.4 }] }],
    ['per second', video(0.4, 'per second'), { price: 0.4, prices: [{ unit: 'second', usd: 0.4 }] }],
    ['video_seconds', video(0.08, 'video_seconds'), { price: 0.08, prices: [{ unit: 'second', usd: 0.08 }] }],
    ['1 second', video(0.1, '1 second'), { price: 0.1, prices: [{ unit: 'second', usd: 0.1 }] }],
    [
      '5 seconds: a block, a started one charged whole',
      video(0.5, '5 seconds'),
      { price: 0.1, prices: [{ unit: 'block', usd: 0.5, blockSeconds: 5 }] },
    ],
    [
      'videos: the default length only',
      video(0.5, 'videos'),
      { price: 0.1, prices: [{ unit: 'video', usd: 0.5, duration: 5 }], durations: [5] },
    ],
    [
      'generations of a video model: a video',
      video(0.5, 'generations'),
      { price: 0.1, prices: [{ unit: 'video', usd: 0.5, duration: 5 }], durations: [5] },
    ],
    ['images', image(0.04, 'images'), { price: 0.04, prices: [{ unit: 'image', usd: 0.04 }] }],
    [
      'generations of an image model: an image',
      image(0.04, 'generations'),
      { price: 0.04, prices: [{ unit: 'image', usd: 0.04 }] },
    ],
    [
      'megapixels: whole ones, rounded up (1024x1024 bills two)',
      image(0.025, 'megapixels'),
      { price: 0.05, prices: [{ unit: 'megapixel', usd: 0.025, rounding: 'up' }] },
    ],
    [
      'processed megapixels',
      image(0.025, 'processed megapixels'),
      { price: 0.05, prices: [{ unit: 'megapixel', usd: 0.025, rounding: 'up' }] },
    ],
    ['units: named, not priced', video(0.01, 'units'), { unpricedUnit: 'units' }],
    ['gpu_seconds: named, not priced', video(0.001, 'gpu_seconds'), { unpricedUnit: 'gpu_seconds' }],
    ['images for a video model: not priced', video(0.04, 'images'), { unpricedUnit: 'images' }],
    ['seconds for an image model: not priced', image(0.04, 'seconds'), { unpricedUnit: 'seconds' }],
  ])('%s', (_name, got, expected) => {
    expect(got).toEqual(expected);
  });

  it('videos without a default length cannot be charged: named, not priced', () => {
    expect(catalogPrice({ usd: 0.5, unit: 'videos' }, 'video', {})).toEqual({ unpricedUnit: 'videos' });
  });
});

/** A fal endpoint of the fixtures, listed at this price. */
function falListed(id: string, price: ListedPrice | undefined): ListedModel {
  const entry = FAL_LISTING.find((e) => e.id === id)!;
  const model = falModel(entry) as { openapi: { paths: Record<string, { post: unknown }> } };
  const post = model.openapi.paths[`/${id}`]!.post as {
    requestBody: { content: { 'application/json': { schema: unknown } } };
  };
  const input = resolveInputSchema(model.openapi, post.requestBody.content['application/json'].schema)!;
  const task =
    entry.category === 'image-to-video'
      ? 'image_to_video'
      : entry.category === 'text-to-image'
        ? 'text_to_image'
        : 'text_to_video';
  return { provider: 'fal', id, task, name: entry.name, description: '', input, page: '', ...(price ? { price } : {}) };
}

function sync(models: ListedModel[]): { document: OperatorDocument; unpriced: UnpricedModel[] } {
  const { document, counts } = buildOperatorDocument({
    builtin: builtinCatalog(),
    previous: undefined,
    read: [{ provider: 'fal', listing: { models, skipped: 0, prices: models.length } }],
    map: providerModelMap(),
    day: '2026-12-06',
    falPlatformUrl: 'https://api.fal.ai/v1',
  });
  return { document, unpriced: counts.fal.unpricedModels };
}

/** The fal offer of a model as the service loads the synced catalog. */
function loadedOffer(document: OperatorDocument, model: string) {
  const merged = mergeOperatorCatalog(builtinCatalog(), parseOperatorCatalog(JSON.stringify(document), 'synced'));
  return merged.models.find((m) => m.id === model)?.offers.find((o) => o.provider === 'fal');
}

describe('a sync over the built-in tables', () => {
  it("never flattens Veo 3's sound table into fal's one listed figure; reports it with the unit", () => {
    const { document, unpriced } = sync([
      falListed('fal-ai/veo3', { usd: 0.4, unit: 'seconds' }),
      falListed('fal-ai/veo3/image-to-video', { usd: 0.4, unit: 'seconds' }),
    ]);
    expect(loadedOffer(document, 'google/veo-3')?.prices).toEqual([
      { unit: 'second', usd: 0.2, audio: false },
      { unit: 'second', usd: 0.4, audio: true },
    ]);
    expect(unpriced).toContainEqual({
      model: 'google/veo-3',
      endpoint: 'fal-ai/veo3',
      unit: 'seconds',
      kept: 'builtin',
    });
  });

  it("never applies Ray 2's 540p figure to 720p: a listed 5 s block takes the base and keeps ×2 at 720p", () => {
    const { document } = sync([
      falListed('fal-ai/luma-dream-machine/ray-2', { usd: 0.6, unit: '5 seconds' }),
      falListed('fal-ai/luma-dream-machine/ray-2/image-to-video', { usd: 0.6, unit: '5 seconds' }),
    ]);
    const ray = loadedOffer(document, 'luma/ray-2');
    expect(ray?.prices).toEqual([
      { unit: 'block', usd: 0.6, blockSeconds: 5, sizeMultipliers: { '540p': 1, '720p': 2, '1080p': 4 } },
    ]);
    expect(ray).toMatchObject({ price: 0.24, priceAsOf: '2026-12-06' });
  });

  it("a listed per-video figure does not replace Ray 2's block rule: the built-in rule is kept", () => {
    const { document, unpriced } = sync([falListed('fal-ai/luma-dream-machine/ray-2', { usd: 0.5, unit: 'videos' })]);
    expect(loadedOffer(document, 'luma/ray-2')?.prices).toEqual([
      { unit: 'block', usd: 0.5, blockSeconds: 5, sizeMultipliers: { '540p': 1, '720p': 2, '1080p': 4 } },
    ]);
    expect(unpriced).toContainEqual(expect.objectContaining({ model: 'luma/ray-2', unit: 'videos', kept: 'builtin' }));
  });

  it("Wan 2.2's 480p and 720p lines survive one listed per-second figure", () => {
    const { document } = sync([falListed('fal-ai/wan/v2.2-a14b/text-to-video', { usd: 0.08, unit: 'seconds' })]);
    expect(loadedOffer(document, 'wan/v2.2')?.prices).toEqual([
      { unit: 'second', usd: 0.04, size: '480p' },
      { unit: 'second', usd: 0.08, size: '720p' },
    ]);
  });

  it('one line in the same unit takes the listed figure, dated, and keeps its rounding', () => {
    const { document, unpriced } = sync([
      falListed('fal-ai/flux/dev', { usd: 0.03, unit: 'megapixels' }),
      falListed('fal-ai/minimax/hailuo-02/standard/text-to-video', { usd: 0.05, unit: 'seconds' }),
    ]);
    expect(loadedOffer(document, 'bfl/flux-dev')).toMatchObject({
      price: 0.06,
      prices: [{ unit: 'megapixel', usd: 0.03, rounding: 'up' }],
      priceAsOf: '2026-12-06',
    });
    expect(loadedOffer(document, 'minimax/hailuo-02')).toMatchObject({ prices: [{ unit: 'second', usd: 0.05 }] });
    expect(unpriced).toEqual([]);
  });

  it('a unit the catalog cannot read keeps the built-in rule and is reported with that unit', () => {
    const { document, unpriced } = sync([falListed('fal-ai/flux/dev', { usd: 0.01, unit: 'units' })]);
    expect(loadedOffer(document, 'bfl/flux-dev')?.prices).toEqual([{ unit: 'megapixel', usd: 0.025, rounding: 'up' }]);
    expect(unpriced).toEqual([{ model: 'bfl/flux-dev', endpoint: 'fal-ai/flux/dev', unit: 'units', kept: 'builtin' }]);
  });

  it('a model of its own priced in an unknown unit is not offered, and is reported with the unit', () => {
    const id = FAL_LISTING.find((e) => e.id.includes('pixverse') && e.category === 'text-to-video')!.id;
    const { document, unpriced } = sync([falListed(id, { usd: 0.02, unit: 'units' })]);
    expect(document.models.some((m) => (m.offers ?? []).some((o) => JSON.stringify(o.path).includes(id)))).toBe(false);
    expect(unpriced).toEqual([expect.objectContaining({ endpoint: id, unit: 'units', kept: 'none' })]);
  });
});

describe('the human report', () => {
  it('names each listed price the catalog could not take, with its unit and what was kept', () => {
    const lines = describeReport(
      {
        at: '2026-12-06T04:00:00.000Z',
        written: true,
        keptLast: false,
        providers: [
          {
            provider: 'fal',
            ok: true,
            models: 3,
            prices: 3,
            unpriced: 1,
            unpricedModels: [
              { model: 'google/veo-3', endpoint: 'fal-ai/veo3', unit: 'seconds', kept: 'builtin' },
              { model: 'acme/clip', endpoint: 'acme/clip/text-to-video', unit: 'units', kept: 'none' },
              { model: 'acme/quiet', endpoint: 'acme/quiet', unit: null, kept: 'none' },
            ],
          },
        ],
        models: { video: 2, image: 0 },
      },
      false,
    );
    expect(lines).toEqual([
      'fal\t3 models, 3 prices (1 without a price left out)',
      '  unpriced\tgoogle/veo-3 (fal-ai/veo3): listed per "seconds", which cannot replace its price rule: the built-in rule is kept',
      '  unpriced\tacme/clip (acme/clip/text-to-video): listed per "units", a unit the catalog cannot charge by: not offered',
      'wrote the operator catalog',
      'catalog: 2 video models, 0 image models',
    ]);
  });
});
