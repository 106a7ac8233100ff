import { describe, expect, it } from 'vitest';
import { offerTarget } from '../../../../../server/providers/remote/offer-target.ts';
import type { ProviderOffer } from '../../../../../server/providers/types.ts';

const startImage = { path: '/tmp/frame.png', mime: 'image/png', bytes: 1000 };

function offer(overrides: Partial<ProviderOffer> = {}): ProviderOffer {
  return { model: 'acme/clip', price: 0.1, features: ['text_to_video'], sizes: ['720p'], ...overrides };
}

describe('offerTarget: where a task goes at its provider', () => {
  it("takes the offer's path for the task's kind: text-to-video, image-to-video, text-to-image", () => {
    const split = offer({ path: { text_to_video: 'acme/t2v', image_to_video: 'acme/i2v', text_to_image: 'acme/t2i' } });
    expect(offerTarget(split, { kind: 'video' })).toEqual({ path: 'acme/t2v' });
    expect(offerTarget(split, { kind: 'video', startImage })).toEqual({ path: 'acme/i2v' });
    expect(offerTarget(split, { kind: 'image' })).toEqual({ path: 'acme/t2i' });
    expect(offerTarget(offer({ path: 'acme/one' }), { kind: 'video', startImage })).toEqual({ path: 'acme/one' });
  });

  it("falls back to the offer's model when it names no path for the task", () => {
    expect(offerTarget(offer(), { kind: 'video' })).toEqual({ path: 'acme/clip' });
    expect(offerTarget(offer({ path: { text_to_video: 'acme/t2v' } }), { kind: 'video', startImage })).toEqual({
      path: 'acme/clip',
    });
  });

  it("carries a synced offer's input names and the input schema of the path chosen, not another path's", () => {
    const schema = { type: 'object', properties: { prompt: { type: 'string' } } };
    const synced = offer({
      path: { text_to_video: 'acme/t2v', image_to_video: 'acme/i2v' },
      inputs: { aspect_ratio: { name: 'ratio' } },
      inputSchemas: { 'acme/i2v': schema },
    });
    expect(offerTarget(synced, { kind: 'video', startImage })).toEqual({
      path: 'acme/i2v',
      inputs: { aspect_ratio: { name: 'ratio' } },
      inputSchema: { schema },
    });
    expect(offerTarget(synced, { kind: 'video' })).toEqual({
      path: 'acme/t2v',
      inputs: { aspect_ratio: { name: 'ratio' } },
    });
  });
});
