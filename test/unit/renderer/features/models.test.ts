import { beforeEach, describe, expect, it } from 'vitest';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import {
  allCapabilities,
  cheapestOffer,
  filterModels,
  modelCapabilities,
  offerPriceText,
  priceRange,
} from '../../../../renderer/src/stores/models/selectors.ts';
import { chargeFor } from '../../../../shared/api/pricing.ts';
import { imageModel, installFakeIpc, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
beforeEach(() => {
  ipc = installFakeIpc();
  useModels.getState().reset();
});

describe('models', () => {
  const models = [
    model(),
    model({
      id: 'mdl_b',
      name: 'Plain',
      slug: 'plain',
      providers: [{ id: 'p', slug: 'p', price: 0.02, features: ['text_to_video'] }],
    }),
    imageModel(),
  ];
  it('filters by media, search and capabilities', () => {
    expect(filterModels({ models, search: '', capabilities: [] }, 'video').map((m) => m.id)).toEqual([
      'mdl_a',
      'mdl_b',
    ]);
    expect(filterModels({ models, search: 'plain', capabilities: [] }, 'video').map((m) => m.id)).toEqual(['mdl_b']);
    expect(filterModels({ models, search: '', capabilities: ['image_to_video'] }, 'video').map((m) => m.id)).toEqual([
      'mdl_a',
    ]);
    expect(filterModels({ models, search: '', capabilities: [] }, 'image').map((m) => m.id)).toEqual(['mdl_img']);
  });
  it('capabilities and prices', () => {
    expect(modelCapabilities(model())).toEqual(['hd', 'image_to_video', 'seed', 'style', 'text_to_video']);
    expect(allCapabilities(models, 'image')).toEqual(['text_to_image']);
    expect(priceRange(model())).toEqual({ min: 0.01, max: 0.05 });
    expect(cheapestOffer(model())?.id).toBe('p_cheap');
  });
  it("shows an offer's price table compactly, and its one figure without one", () => {
    const veo = {
      id: 'fal',
      slug: 'fal',
      price: 0.4,
      features: ['text_to_video', 'audio'],
      prices: [
        { unit: 'second' as const, usd: 0.2, audio: false },
        { unit: 'second' as const, usd: 0.4, size: '1080p', audio: true },
      ],
    };
    expect(offerPriceText(model(), veo)).toBe('silent $0.200/s · 1080p with sound $0.400/s');
    expect(offerPriceText(model(), { ...veo, prices: [] })).toBe('$0.400 / s');
    expect(offerPriceText(imageModel(), { id: 'p', slug: 'p', price: 0.04, features: [] })).toBe('$0.040 / image');
    // The renderer reads the same pure pricing the service charges by.
    expect(chargeFor(veo, { media: 'video', size: '1080p', duration: 8, audio: true }).usd).toBeCloseTo(3.2, 10);
  });
  it('loads models and providers', async () => {
    ipc.models.list.mockResolvedValue({ models });
    ipc.providers.list.mockResolvedValue({ providers: [] });
    await useModels.getState().load();
    expect(useModels.getState()).toMatchObject({ status: 'ready', models });
  });
  it('shows the load error', async () => {
    ipc.models.list.mockRejectedValue(new Error('Invalid API key'));
    ipc.providers.list.mockResolvedValue({ providers: [] });
    await useModels.getState().load();
    expect(useModels.getState()).toMatchObject({ status: 'error', error: 'Invalid API key' });
  });
});
