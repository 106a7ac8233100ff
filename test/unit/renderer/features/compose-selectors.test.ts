import { describe, expect, it } from 'vitest';
import { initialState, type ComposeState } from '../../../../renderer/src/stores/compose/initialState.ts';
import {
  buildRequest,
  checkStartFrame,
  defaultParams,
  droppedLabel,
  generateBlocker,
  isPromptOverLimit,
  isRoutingDisabled,
  promptLength,
  promptLimit,
  selectedRow,
  wireModelId,
} from '../../../../renderer/src/stores/compose/selectors.ts';
import { sizeLimit } from '../../../../renderer/src/stores/compose/estimate.ts';
import { imageModel, model } from '../fixtures.ts';

const state = (over: Partial<ComposeState> = {}): ComposeState => ({ ...initialState, ...over });

describe('compose selectors', () => {
  it('limits the prompt to 500 characters for video and 1,000 for images', () => {
    expect(promptLimit({ media: 'video' })).toBe(500);
    expect(promptLimit({ media: 'image' })).toBe(1000);
    expect(isPromptOverLimit({ media: 'video', prompt: 'x'.repeat(500) })).toBe(false);
    expect(isPromptOverLimit({ media: 'video', prompt: 'x'.repeat(501) })).toBe(true);
    expect(isPromptOverLimit({ media: 'image', prompt: 'x'.repeat(501) })).toBe(false);
    expect(promptLength('🎬ab')).toBe(3);
  });

  it('blocks Generate with a reason', () => {
    const m = model();
    expect(generateBlocker(state(), m)).toBe('Write a prompt first');
    expect(generateBlocker(state({ prompt: 'x'.repeat(501) }), m)).toMatch(/over the 500-character limit/);
    expect(generateBlocker(state({ prompt: 'hi' }), undefined)).toBe('Pick a model');
    expect(generateBlocker(state({ prompt: 'hi', startFrameError: 'too big' }), m)).toBe('too big');
    expect(generateBlocker(state({ prompt: 'hi' }), m)).toBeNull();
  });

  it('disables routing when a provider is pinned', () => {
    expect(isRoutingDisabled({ provider: null })).toBe(false);
    expect(isRoutingDisabled({ provider: 'p_full' })).toBe(true);
  });

  it('the price and provider shown are the service preview’s row for the selected mode, or the pinned one', () => {
    const row = (routing: 'optimal' | 'cheapest' | 'compatible', slug: string, price: number) => ({
      routing,
      provider: { id: `local-${slug}`, slug, name: slug },
      unitPrice: price,
      price,
      dropped: routing === 'cheapest' ? ['image_url'] : [],
      reason: 'why',
      error: null,
    });
    const data = {
      model: 'clipdesk/motion:1.1',
      media: 'video' as const,
      count: 1,
      routing: 'optimal' as const,
      pinned: null,
      rows: [row('optimal', 'prism', 0.046), row('cheapest', 'swift', 0.02), row('compatible', 'studio', 0.04)],
    };
    const preview = { status: 'ready' as const, data, error: null, key: 'k' };
    expect(selectedRow(state({ preview, routing: 'cheapest' }))?.provider?.slug).toBe('swift');
    expect(selectedRow(state({ preview, routing: 'compatible' }))?.price).toBe(0.04);
    // Pinned: the body's own mode (optimal by default), whatever the radio says.
    expect(selectedRow(state({ preview, routing: 'cheapest', provider: 'prism' }))?.provider?.slug).toBe('prism');
    expect(selectedRow(state())).toBeNull();
    expect(['image_url', 'style', 'seed', 'negative_prompt'].map(droppedLabel)).toEqual([
      'start frame',
      'style',
      'seed',
      'negative prompt',
    ]);
  });

  it('builds the request from the model rules, routing only when no provider is pinned', () => {
    const m = model();
    const s = state({
      prompt: '  waves  ',
      params: { public: true, duration: 6, size: '1080p', style: 'noir' },
      routing: 'cheapest',
    });
    expect(buildRequest(s, m)).toEqual({
      kind: 'video',
      model: 'local/waves',
      prompt: 'waves',
      public: true,
      routing: 'cheapest',
      duration: 6,
      size: '1080p',
      style: 'noir',
    });
    const pinned = buildRequest({ ...s, provider: 'p_full', version: '1' }, m);
    expect(pinned['provider']).toBe('p_full');
    expect(pinned['routing']).toBeUndefined();
    expect(pinned['model']).toBe('local/waves:1');
    expect(wireModelId(m, null)).toBe('local/waves');
  });

  it('takes defaults from the model: duration at its default, the default size', () => {
    expect(defaultParams(model(), { public: true })).toEqual({ public: true, duration: 4, size: '720p' });
    expect(defaultParams(imageModel(), { public: false })).toEqual({ public: false, size: '1024x1024' });
  });

  it('refuses a start frame over 20 MB before any upload, with a clear message', () => {
    const big = checkStartFrame({ name: 'big.png', bytes: 21_000_000, mime: 'image/png' });
    expect(big.error).toBe('big.png is 21 MB; start frames can be at most 20 MB. Nothing was uploaded.');
    expect(checkStartFrame({ name: 'ok.png', bytes: 20_000_000, mime: 'image/png' }).error).toBeNull();
    expect(checkStartFrame({ name: 'a.txt', bytes: 10, mime: 'text/plain' }).error).toMatch(
      /not a PNG, JPEG, WebP or GIF/,
    );
  });

  it('warns about size and dimensions', () => {
    expect(checkStartFrame({ name: 'a.png', bytes: 16_000_000, mime: 'image/png' }).warnings[0]).toMatch(/Large file/);
    expect(
      checkStartFrame({ name: 'a.png', bytes: 10, mime: 'image/png', width: 100, height: 80 }).warnings[0],
    ).toMatch(/Small image \(100×80\)/);
    expect(
      checkStartFrame({ name: 'a.png', bytes: 10, mime: 'image/png', width: 6000, height: 4000 }).warnings[0],
    ).toMatch(/scaled down/);
  });
});

describe('why the estimate is above the card\'s "from" price', () => {
  // Seedance-like: the second provider is cheaper at 480p by its table, dearer at 720p.
  const seedance = model({
    providers: [
      { id: 'fal', slug: 'fal', price: 0.036, features: ['text_to_video'], sizes: ['480p', '720p'] },
      {
        id: 'replicate',
        slug: 'replicate',
        price: 0.05,
        features: ['text_to_video'],
        sizes: ['480p', '720p', '1080p'],
        prices: [
          { unit: 'second', usd: 0.018, size: '480p' },
          { unit: 'second', usd: 0.05, size: '720p' },
          { unit: 'second', usd: 0.09, size: '1080p' },
        ],
      },
    ],
  });
  it("compares the offers at the request's size, by their tables", () => {
    // At 480p the chosen provider's line is the cheapest: nothing to explain.
    expect(sizeLimit(seedance, '480p', 'replicate', [])).toBeNull();
    // At 1080p only it renders: its 1080p line, not its headline, is the figure.
    expect(sizeLimit(seedance, '1080p', 'replicate', [])).toMatchObject({
      why: 'only replicate renders 1080p',
      chosen: '$0.090 / s',
    });
  });
});
