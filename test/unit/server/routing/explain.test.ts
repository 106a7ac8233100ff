import { describe, expect, it } from 'vitest';
import type { Feature } from '../../../../shared/api/index.ts';
import { offerSupportsSize } from '../../../../server/providers/model-definitions.ts';
import type { LocalProvider, ProviderOffer } from '../../../../server/providers/types.ts';
import { explainChoice } from '../../../../server/routing/explain.ts';
import { routeRequest } from '../../../../server/routing/route.ts';
import type { RouteCandidate, RouteRequest } from '../../../../server/routing/route.ts';

/** Fake providers: routing only reads offers. */
function provider(slug: string, offer: Partial<ProviderOffer> & { price: number; features: Feature[] }): LocalProvider {
  return {
    id: `p-${slug}`,
    slug,
    name: `Local ${slug[0]!.toUpperCase()}${slug.slice(1)}`,
    description: '',
    offers: [{ model: 'm/video', sizes: ['360p', '720p'], ...offer }],
    render: () => Promise.reject(new Error('not in unit tests')),
  };
}
const swift = provider('swift', { price: 0.01, features: ['text_to_video', 'seed'] });
const studio = provider('studio', { price: 0.02, features: ['text_to_video', 'image_to_video', 'seed'] });
const prism = provider('prism', { price: 0.023, features: ['text_to_video', 'image_to_video', 'seed', 'hd'] });
const all = [swift, studio, prism];

const first = (over: Partial<RouteRequest>, providers = all): RouteCandidate =>
  routeRequest(
    { providers, offerSupportsSize },
    { media: 'video', model: 'm/video', size: '360p', features: ['text_to_video'], mode: 'optimal', ...over },
  )[0]!;
const i2v: Feature[] = ['text_to_video', 'image_to_video'];

describe('explainChoice: one line on why a mode picks its provider', () => {
  it('cheapest drops the start frame: says so in the creator’s words', () => {
    const c = first({ mode: 'cheapest', features: i2v });
    expect(c.provider.slug).toBe('swift');
    expect(explainChoice({ mode: 'cheapest', pinned: false, first: c, fullMatch: null, unknown: [] })).toBe(
      'drops image_url: the cheapest provider takes no start frame',
    );
  });

  it('several dropped parameters, and fields that are no parameter of the model', () => {
    const c = first({ mode: 'cheapest', features: [...i2v, 'style'], unknownParameters: ['mood'] });
    expect(explainChoice({ mode: 'cheapest', pinned: false, first: c, fullMatch: null, unknown: ['mood'] })).toBe(
      'drops image_url, style, mood: the cheapest provider takes no start frame and style; mood: not a parameter of this model',
    );
  });

  it('optimal pays up to 20 % more for a provider with more features, and names them', () => {
    const c = first({ mode: 'optimal', features: i2v });
    const full = first({ mode: 'compatible', features: i2v });
    expect([c.provider.slug, full.provider.slug]).toEqual(['prism', 'studio']);
    expect(explainChoice({ mode: 'optimal', pinned: false, first: c, fullMatch: full, unknown: [] })).toBe(
      'Local Prism: supports HD too, for 15 % more than Local Studio (optimal allows up to 20 %)',
    );
  });

  it('optimal without a provider that honours everything falls back to cheapest, and says why', () => {
    const c = first({ mode: 'optimal', features: i2v }, [swift]);
    expect(explainChoice({ mode: 'optimal', pinned: false, first: c, fullMatch: null, unknown: [] })).toBe(
      'drops image_url: no provider honours every parameter, and the cheapest takes no start frame',
    );
  });

  it('a provider that honours everything and is cheapest says exactly that, in every mode', () => {
    for (const mode of ['optimal', 'cheapest', 'compatible'] as const) {
      const c = first({ mode });
      const full = first({ mode: 'compatible' });
      expect(explainChoice({ mode, pinned: false, first: c, fullMatch: full, unknown: [] })).toBe(
        'cheapest provider that honours every parameter',
      );
    }
  });

  it('a pinned provider bypasses routing', () => {
    const c = first({ provider: 'prism' });
    expect(explainChoice({ mode: 'cheapest', pinned: true, first: c, fullMatch: null, unknown: [] })).toBe(
      'Local Prism is named in the request: routing is bypassed',
    );
  });
});
