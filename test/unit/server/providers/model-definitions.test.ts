import { describe, expect, it } from 'vitest';
import { ModelParameters } from '../../../../shared/api/index.ts';
import type { Feature, MediaKind } from '../../../../shared/api/index.ts';
import {
  createLocalProviders,
  defaultSize,
  findModel,
  imageSizeDimensions,
  isHdSize,
  MODELS,
  offerSupportsSize,
  PROVIDERS,
  requestFeatures,
  ROUTING_EXAMPLE,
  sizeDimensions,
  toModelRecord,
  toProviderRecord,
  videoSizeDimensions,
} from '../../../../server/providers/index.ts';
import type { ProviderOffer } from '../../../../server/providers/index.ts';
import { ModelRecord, ProviderRecord } from '../../../../shared/api/index.ts';

describe('models', () => {
  it('has at least two video models and one image model with valid parameter rules', () => {
    expect(MODELS.filter((m) => m.media === 'video').length).toBeGreaterThanOrEqual(2);
    expect(MODELS.filter((m) => m.media === 'image').length).toBeGreaterThanOrEqual(1);
    for (const m of MODELS) {
      expect(() => ModelParameters.parse(m.parameters)).not.toThrow();
      expect(m.id).toBe(`${m.base}/${m.slug}`);
      expect(m.versions.length).toBeGreaterThan(0);
    }
  });

  it('follows the spec placeholders: A 2-8 s default 4, B 3-10 s default 6 with style', () => {
    expect(findModel('clipdesk/motion')!.model.parameters.duration).toEqual({ min: 2, max: 8, default: 4 });
    const drift = findModel('clipdesk/drift')!.model.parameters;
    expect(drift.duration).toEqual({ min: 3, max: 10, default: 6 });
    expect(drift.style?.values.length).toBeGreaterThan(1);
    expect(drift.image_url).toEqual({ supported: true });
    expect(defaultSize(findModel('clipdesk/drift')!.model)).toBe('1080p');
  });

  it('labels models and providers honestly as procedural, not AI', () => {
    for (const x of [...MODELS, ...PROVIDERS]) {
      expect(x.description).toMatch(/procedural/i);
      expect(x.description).toMatch(/not (an )?AI/i);
    }
  });
});

describe('findModel', () => {
  it('resolves the latest version when none is given', () => {
    expect(findModel('clipdesk/motion')).toMatchObject({ version: '1.1', canonicalId: 'clipdesk/motion:1.1' });
  });
  it('honours an explicit version, case and surrounding space', () => {
    expect(findModel(' Clipdesk/Motion:1.0 ')).toMatchObject({ version: '1.0', canonicalId: 'clipdesk/motion:1.0' });
  });
  it('accepts a bare slug', () => {
    expect(findModel('still')?.canonicalId).toBe('clipdesk/still:1.0');
    expect(findModel('drift:1.0')?.canonicalId).toBe('clipdesk/drift:1.0');
  });
  it('rejects unknown models, unknown versions and malformed ids', () => {
    for (const id of [
      'clipdesk/nope',
      'other/motion',
      'clipdesk/motion:9.9',
      'clipdesk/motion:1.0:1',
      '../motion',
      'a/b/c',
      '',
      'mo tion',
    ]) {
      expect(findModel(id)).toBeUndefined();
    }
  });
});

describe('sizes', () => {
  it('maps labels to pixels', () => {
    expect(videoSizeDimensions('360p')).toEqual({ width: 640, height: 360 });
    expect(videoSizeDimensions('480p')).toEqual({ width: 854, height: 480 });
    expect(videoSizeDimensions('720p')).toEqual({ width: 1280, height: 720 });
    expect(videoSizeDimensions('1080p')).toEqual({ width: 1920, height: 1080 });
    expect(videoSizeDimensions('4k')).toBeUndefined();
  });
  it('accepts image sizes within the model bounds only', () => {
    const still = findModel('clipdesk/still')!.model;
    expect(sizeDimensions(still, '1000x700')).toEqual({ width: 1000, height: 700 });
    expect(sizeDimensions(still, '4096x4096')).toEqual({ width: 4096, height: 4096 });
    expect(sizeDimensions(still, '4097x10')).toBeUndefined();
    expect(sizeDimensions(still, '8x8')).toBeUndefined();
    expect(imageSizeDimensions('1024')).toBeUndefined();
    const motion = findModel('clipdesk/motion')!.model;
    expect(sizeDimensions(motion, '720p')).toEqual({ width: 1280, height: 720 });
    expect(sizeDimensions(motion, '1280x720')).toBeUndefined();
  });
});

describe('requestFeatures', () => {
  it('lists what a request uses', () => {
    expect(requestFeatures({ media: 'video', size: '720p' })).toEqual(['text_to_video']);
    expect(requestFeatures({ media: 'video', size: '1080p', image_url: 'u', style: 'noir', seed: 1 })).toEqual([
      'text_to_video',
      'image_to_video',
      'style',
      'hd',
      'seed',
    ]);
    expect(requestFeatures({ media: 'image', size: '4096x1024' })).toEqual(['text_to_image', 'hd']);
    expect(isHdSize('image', '2048x2048')).toBe(false);
  });
});

describe('price table', () => {
  it('has three providers with different prices for every model', () => {
    expect(PROVIDERS.length).toBeGreaterThanOrEqual(3);
    for (const m of MODELS) {
      const prices = PROVIDERS.map((p) => p.offers.find((o) => o.model === m.id)?.price);
      expect(prices.every((x) => typeof x === 'number')).toBe(true);
      expect(new Set(prices).size).toBe(prices.length);
    }
  });

  it('offers hd exactly where a provider renders the hd sizes', () => {
    for (const p of PROVIDERS) {
      for (const o of p.offers) {
        const media: MediaKind = findModel(o.model)!.model.media;
        const hdSize = media === 'video' ? '1080p' : '4096x4096';
        expect(o.features.includes('hd'), `${p.slug} ${o.model}`).toBe(offerSupportsSize(o, media, hdSize));
      }
    }
  });

  /**
   * A reference reading of the routing rules in docs/api.md, only to check that the data makes the three
   * modes disagree; the service's router lives in server/routing.
   */
  function pick(
    mode: 'optimal' | 'cheapest' | 'compatible',
    model: string,
    size: string,
    features: Feature[],
  ): string | undefined {
    const media = findModel(model)!.model.media;
    const basic = PROVIDERS.flatMap((p) => {
      const offer = p.offers.find((o) => o.model === model);
      return offer && offerSupportsSize(offer, media, size) ? [{ slug: p.slug, offer }] : [];
    }).sort((a, b) => a.offer.price - b.offer.price);
    if (mode === 'cheapest') return basic[0]?.slug;
    const full = basic.filter((c) => features.every((f) => c.offer.features.includes(f)));
    const best = full[0];
    if (!best || mode === 'compatible') return best?.slug;
    const richer = full.filter((c) => strictlyMore(c.offer, best.offer) && c.offer.price <= best.offer.price * 1.2);
    return (richer[0] ?? best).slug;
  }
  const strictlyMore = (a: ProviderOffer, b: ProviderOffer) =>
    b.features.every((f) => a.features.includes(f)) && a.features.length > b.features.length;

  it('makes optimal, cheapest and compatible pick three different providers for the documented example', () => {
    const { request, expected } = ROUTING_EXAMPLE;
    const features = requestFeatures({ media: 'video', size: request.size, image_url: request.image_url });
    expect(features).toEqual(ROUTING_EXAMPLE.features);
    const picks = {
      cheapest: pick('cheapest', request.model, request.size, features),
      compatible: pick('compatible', request.model, request.size, features),
      optimal: pick('optimal', request.model, request.size, features),
    };
    expect(picks).toEqual(expected);
    expect(new Set(Object.values(picks)).size).toBe(3);
  });
});

describe('records', () => {
  it('builds wire records that match the shared schemas', () => {
    const providers = createLocalProviders();
    for (const m of MODELS) {
      const rec = ModelRecord.parse(toModelRecord(m, providers));
      expect(rec.version).toBe(m.versions.at(-1));
      expect(rec.providers).toHaveLength(3);
    }
    for (const p of providers) expect(ProviderRecord.parse(toProviderRecord(p)).status).toBe('available');
    expect(toProviderRecord(providers[0]!, false).status).toBe('unavailable');
  });
});
