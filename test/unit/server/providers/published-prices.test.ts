import { describe, expect, it } from 'vitest';
import type { ChargeRequest, PricedOffer } from '../../../../shared/api/index.ts';
import { chargeFor, tokenCharge } from '../../../../shared/api/index.ts';
import { builtinCatalog } from '../../../../server/providers/catalog-file/load.ts';

/**
 * The providers' own published examples, priced by the built-in catalog's offers exactly as the
 * preview and the charge price them (docs/providers.md, "Prices"; each source in the table there).
 */
function offer(model: string, provider: string): PricedOffer {
  const found = builtinCatalog()
    .models.find((m) => m.id === model)
    ?.offers.find((o) => o.provider === provider);
  if (!found) throw new Error(`no ${provider} offer for ${model}`);
  return found;
}

const video = (r: Partial<ChargeRequest>): ChargeRequest => ({ media: 'video', size: '720p', duration: 5, ...r });
const image = (r: Partial<ChargeRequest>): ChargeRequest => ({ media: 'image', size: '1024x1024', ...r });

describe("fal's published examples", () => {
  it('Kling 2.1 from a start frame: $0.28 for 5 s, and $0.056 per further second, so 10 s is $0.56', () => {
    const kling = offer('kling/v2.1', 'fal');
    expect(chargeFor(kling, video({ duration: 5, startFrame: true })).usd).toBe(0.28);
    expect(chargeFor(kling, video({ duration: 10, startFrame: true })).usd).toBe(0.56);
  });

  it("Kling 2.1 from text alone goes to fal's Master endpoint: $1.40 for 5 s, and $0.28 per further second", () => {
    const kling = offer('kling/v2.1', 'fal');
    expect(chargeFor(kling, video({ duration: 5 })).usd).toBe(1.4);
    expect(chargeFor(kling, video({ duration: 10, startFrame: false })).usd).toBe(2.8);
  });

  it('Ray 2: per 5 s at 540p; 9 s is two blocks and 720p twice 540p, so 9 s at 720p is $2.00', () => {
    const ray = offer('luma/ray-2', 'fal');
    expect(chargeFor(ray, video({ size: '720p', duration: 9 })).usd).toBe(2);
    expect(chargeFor(ray, video({ size: '720p', duration: 5 })).usd).toBe(1);
    expect(chargeFor(ray, video({ size: '540p', duration: 5 })).usd).toBe(0.5);
    expect(chargeFor(ray, video({ size: '1080p', duration: 9 })).usd).toBe(4);
  });

  it('FLUX.1 [dev]: $0.025 per megapixel, rounded up to whole megapixels per image', () => {
    const flux = offer('bfl/flux-dev', 'fal');
    expect(chargeFor(flux, image({ size: '512x512' })).usd).toBe(0.025);
    expect(chargeFor(flux, image({ size: '1024x768' })).usd).toBe(0.025);
    // fal's whole megapixel is 1024 × 1024 pixels: one more pixel row bills a second one.
    expect(chargeFor(flux, image({ size: '1024x1024' })).usd).toBe(0.025);
    expect(chargeFor(flux, image({ size: '1024x1025' })).usd).toBe(0.05);
    expect(chargeFor(flux, image({ size: '1920x1080' })).usd).toBe(0.05);
    expect(chargeFor(flux, image({ size: '512x512', count: 3 })).usd).toBe(0.075);
  });

  it('Veo 3: $0.40 per second with sound, $0.20 without', () => {
    const veo = offer('google/veo-3', 'fal');
    expect(chargeFor(veo, video({ size: '1080p', duration: 8, audio: true })).usd).toBe(3.2);
    expect(chargeFor(veo, video({ size: '1080p', duration: 8, audio: false })).usd).toBe(1.6);
    expect(chargeFor(veo, video({ size: '720p', duration: 8, audio: false })).usd).toBe(1.6);
  });

  it('Wan 2.2: 480p at its own rate, half of 720p', () => {
    const wan = offer('wan/v2.2', 'fal');
    expect(chargeFor(wan, video({ size: '720p' })).usd).toBe(0.4);
    expect(chargeFor(wan, video({ size: '480p' })).usd).toBe(0.2);
  });
});

describe("OpenAI's gpt-image-1", () => {
  const gpt = offer('openai/gpt-image-1', 'openai');

  it('previews by its per-image prices', () => {
    expect(chargeFor(gpt, image({ size: '1536x1024', count: 2 })).usd).toBe(0.126);
  });

  it("charges the answer's tokens by kind: text and image input, image output", () => {
    // A medium 1024x1024 image is 1,056 image output tokens (OpenAI's published count).
    expect(tokenCharge(gpt.prices, { input_text: 50, output_image: 1056 })).toBe(0.04249);
    expect(tokenCharge(gpt.prices, { input_text: 10, input_image: 40, output_image: 1056 })).toBe(0.04269);
  });
});
