import { describe, expect, it } from 'vitest';
import type { Feature } from '../../../../shared/api/index.ts';
import {
  PROVIDERS,
  ROUTING_EXAMPLE,
  offerSupportsSize,
  requestFeatures,
} from '../../../../server/providers/model-definitions.ts';
import type { LocalProvider, ProviderOffer } from '../../../../server/providers/types.ts';
import { routeRequest } from '../../../../server/routing/route.ts';
import type { RouteRequest } from '../../../../server/routing/route.ts';

/** Fake providers: routing only reads offers, so render is never called here. */
function provider(slug: string, offer: Partial<ProviderOffer> & { price: number; features: Feature[] }): LocalProvider {
  return {
    id: `p-${slug}`,
    slug,
    name: slug,
    description: '',
    offers: [{ model: 'm/video', sizes: ['360p', '720p'], ...offer }],
    render: () => Promise.reject(new Error('not in unit tests')),
  };
}

const ctx = (providers: LocalProvider[]) => ({ providers, offerSupportsSize });
const req = (over: Partial<RouteRequest>): RouteRequest => ({
  media: 'video',
  model: 'm/video',
  size: '360p',
  features: ['text_to_video'],
  mode: 'optimal',
  ...over,
});
const slugs = (c: Array<{ provider: { slug: string } }>) => c.map((x) => x.provider.slug);

describe('routeRequest', () => {
  const cheap = provider('cheap', { price: 1, features: ['text_to_video'] });
  const mid = provider('mid', { price: 1.5, features: ['text_to_video', 'image_to_video'] });
  const rich = provider('rich', { price: 1.75, features: ['text_to_video', 'image_to_video', 'style'] });
  const pricey = provider('pricey', { price: 3, features: ['text_to_video', 'image_to_video', 'style', 'seed'] });
  const all = [pricey, rich, cheap, mid];
  const i2v: Feature[] = ['text_to_video', 'image_to_video'];

  it('cheapest: lowest price meeting the basics, dropping what it cannot honour', () => {
    const ranked = routeRequest(ctx(all), req({ mode: 'cheapest', features: i2v }));
    expect(slugs(ranked)).toEqual(['cheap', 'mid', 'rich', 'pricey']);
    expect(ranked[0]!.ignoredParameters).toEqual(['image_url']);
    expect(ranked[1]!.ignoredParameters).toEqual([]);
  });

  it('compatible: cheapest that honours every parameter, else 422', () => {
    expect(slugs(routeRequest(ctx(all), req({ mode: 'compatible', features: i2v })))).toEqual([
      'mid',
      'rich',
      'pricey',
    ]);
    expect(() => routeRequest(ctx([cheap]), req({ mode: 'compatible', features: i2v }))).toThrow(
      expect.objectContaining({ code: 'unsupported_parameter', status: 422 }),
    );
  });

  it('optimal: takes a richer provider within 20 %, not beyond', () => {
    // mid 1.5 → rich 1.75 is +16.7 % with strictly more features: rich wins, the rest follow by price.
    expect(slugs(routeRequest(ctx(all), req({ features: i2v })))).toEqual(['rich', 'mid', 'pricey']);
    // Without rich, pricey (+100 %) is too dear: mid stays first.
    expect(slugs(routeRequest(ctx([cheap, mid, pricey]), req({ features: i2v })))).toEqual(['mid', 'pricey']);
    // Exactly +20 % still counts.
    const edge = provider('edge', { price: 1.8, features: ['text_to_video', 'image_to_video', 'style'] });
    expect(slugs(routeRequest(ctx([mid, edge]), req({ features: i2v })))[0]).toBe('edge');
  });

  it('optimal with no full match behaves as cheapest and lists what it dropped', () => {
    const ranked = routeRequest(ctx([cheap]), req({ features: i2v }));
    expect(ranked[0]!.ignoredParameters).toEqual(['image_url']);
  });

  it('the size is a basic requirement', () => {
    expect(() => routeRequest(ctx(all), req({ size: '1080p' }))).toThrow(expect.objectContaining({ status: 422 }));
  });

  it('an explicit provider bypasses routing: 404 unknown, 422 when it cannot honour', () => {
    expect(slugs(routeRequest(ctx(all), req({ provider: 'pricey', mode: 'cheapest' })))).toEqual(['pricey']);
    expect(slugs(routeRequest(ctx(all), req({ provider: 'p-mid' })))).toEqual(['mid']);
    expect(() => routeRequest(ctx(all), req({ provider: 'ghost' }))).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => routeRequest(ctx(all), req({ provider: 'cheap', features: i2v }))).toThrow(
      expect.objectContaining({ status: 422 }),
    );
  });

  it('orders by what this request costs on each offer, not by the headline prices', () => {
    // Headline $0.30/s against $0.40/s; silent, the second charges $0.20/s, and a 720p line $0.10/s.
    const flat = provider('flat', { price: 0.3, features: ['text_to_video', 'audio'] });
    const tabled = provider('tabled', {
      price: 0.4,
      features: ['text_to_video', 'audio'],
      prices: [
        { unit: 'second', usd: 0.1, size: '720p' },
        { unit: 'second', usd: 0.2, audio: false },
        { unit: 'second', usd: 0.4, audio: true },
      ],
    });
    const cost = (over: Partial<RouteRequest['charge']>) =>
      slugs(
        routeRequest(
          ctx([flat, tabled]),
          req({ mode: 'cheapest', charge: { media: 'video', size: '360p', duration: 4, ...over } }),
        ),
      );
    expect(cost({ audio: true })).toEqual(['flat', 'tabled']);
    expect(cost({ audio: false })).toEqual(['tabled', 'flat']);
    expect(cost({ size: '720p', audio: true })).toEqual(['tabled', 'flat']);
    // Without what the request is, the headline prices decide, as before tables.
    expect(slugs(routeRequest(ctx([flat, tabled]), req({ mode: 'cheapest' })))).toEqual(['flat', 'tabled']);
  });

  it("optimal allows 20 % more by this request's cost", () => {
    // A richer provider: $0.5/s headline (67 % more) but $0.35/s for a silent clip (17 % more).
    const plain = provider('plain', { price: 0.3, features: ['text_to_video'] });
    const rich = provider('rich', {
      price: 0.5,
      features: ['text_to_video', 'seed'],
      prices: [
        { unit: 'second', usd: 0.35, audio: false },
        { unit: 'second', usd: 0.5, audio: true },
      ],
    });
    const charge = { media: 'video', size: '360p', duration: 4 };
    expect(slugs(routeRequest(ctx([plain, rich]), req({ charge: { ...charge, audio: false } })))[0]).toBe('rich');
    expect(slugs(routeRequest(ctx([plain, rich]), req({ charge: { ...charge, audio: true } })))[0]).toBe('plain');
  });

  it('the documented example picks three different real providers', () => {
    const features = requestFeatures({ media: 'video', size: '720p', image_url: 'x' });
    expect(features).toEqual(ROUTING_EXAMPLE.features);
    const providers = PROVIDERS.map((p) => ({ ...p, render: () => Promise.reject(new Error('unused')) }));
    for (const [mode, expected] of Object.entries(ROUTING_EXAMPLE.expected)) {
      const ranked = routeRequest(
        ctx(providers),
        req({ model: 'clipdesk/motion', size: '720p', features, mode: mode as RouteRequest['mode'] }),
      );
      expect(ranked[0]!.provider.slug, mode).toBe(expected);
    }
  });
});
