import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RoutingPreviewResponse } from '../../../shared/api/index.ts';
import type { RoutingPreviewRow } from '../../../shared/api/index.ts';
import { startFalFake } from '../../fakes/providers/fal.ts';
import type { FalFake } from '../../fakes/providers/fal.ts';
import { startLumaFake } from '../../fakes/providers/luma.ts';
import { startOpenAIFake } from '../../fakes/providers/openai.ts';
import type { RunningFake } from '../../fakes/providers/types.ts';
import { startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * Prices by their real unit (docs/providers.md, "Prices") on the real Local engine in front of
 * fal's and Luma's contract fakes: the routing preview the app shows before a submit names the
 * price the generation then charges, read from the offer's price table — per second with and
 * without sound, and per fixed-length video.
 */
let fal: FalFake;
let luma: RunningFake;
let openai: RunningFake;
let t: TestService;
let c: TestClient;

beforeAll(async () => {
  [fal, luma, openai] = await Promise.all([
    startFalFake({ pollsBeforeDone: 1 }),
    startLumaFake({ pollsBeforeDone: 1 }),
    startOpenAIFake(),
  ]);
  t = await startTestService({
    providerKeys: { fal: fal.key, luma: luma.key, openai: openai.key },
    providerBaseUrls: { fal: fal.baseUrl, luma: luma.baseUrl, openai: openai.baseUrl },
    remoteTimings: { pollInitialMs: 10, pollMaxMs: 20, jitter: 0, stallMs: 5_000 },
  });
  c = await t.client('pricer', 'enterprise');
});
afterAll(async () => {
  await t.stop();
  await Promise.all([fal.close(), luma.close(), openai.close()]);
});

/** The preview's row for the body's own routing mode: what its submit gets. */
async function previewed(body: Record<string, unknown>): Promise<RoutingPreviewRow> {
  const res = await c.call('POST', '/routing/preview', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const preview = RoutingPreviewResponse.parse(res.body).result;
  const row = preview.rows.find((r) => r.routing === preview.routing);
  expect(row?.error, JSON.stringify(row)).toBeNull();
  return row!;
}

/** Generates the body; its charge, provider and what the provider was sent. */
async function charged(body: Record<string, unknown>) {
  const before = fal.submissions();
  const res = await c.call('POST', '/videos/generations', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const submitted = fal.submissions() > before ? [...fal.inputs.values()].at(-1) : undefined;
  return { price: res.body.price as number, provider: res.body.stats.providerId as string, submitted };
}

const VEO = { model: 'google/veo-3', prompt: 'rain on a tin roof at dusk', size: '1080p', duration: 8 };

describe('the preview equals the charge, by the price table', () => {
  it("a 1080p, 8 s Veo clip with audio: fal's $0.40/s line, previewed and charged alike", async () => {
    const body = { ...VEO, audio: true };
    const row = await previewed(body);
    expect(row.provider?.id).toBe('fal');
    expect(row.priceEntry).toEqual({ unit: 'second', usd: 0.4, audio: true });
    expect(row.price).toBeCloseTo(0.4 * 8, 6);
    const got = await charged(body);
    expect(got.provider).toBe('fal');
    expect(got.price).toBe(row.price);
    expect(got.submitted).toMatchObject({ resolution: '1080p', duration: '8s', generate_audio: true });
  });

  it('the same clip without audio is cheaper, and fal is told not to make sound', async () => {
    const body = { ...VEO, audio: false };
    const row = await previewed(body);
    expect(row.priceEntry).toEqual({ unit: 'second', usd: 0.2, audio: false });
    expect(row.price).toBeCloseTo(0.2 * 8, 6);
    const got = await charged(body);
    expect(got.price).toBe(row.price);
    // A silent request is said so: fal makes (and charges for) sound by default.
    expect(got.submitted).toMatchObject({ generate_audio: false });
  });

  it("a per-video offer: Ray 2 for 9 s is Luma's $1.27 video, not 9 × its $0.142 headline", async () => {
    const body = {
      model: 'luma/ray-2',
      prompt: 'waves on a lighthouse',
      size: '720p',
      duration: 9,
      routing: 'cheapest',
    };
    const row = await previewed(body);
    expect(row.provider?.id).toBe('luma');
    expect(row.priceEntry).toEqual({ unit: 'video', usd: 1.27, duration: 9 });
    expect(row.price).toBe(1.27);
    const got = await charged(body);
    expect(got.provider).toBe('luma');
    expect(got.price).toBe(1.27);
  });

  it("fal's Ray 2, 9 s at 720p: two 5 s blocks at twice the 540p rate, $2.00 previewed and charged", async () => {
    const body = { model: 'luma/ray-2', prompt: 'waves on a lighthouse', size: '720p', duration: 9, provider: 'fal' };
    const row = await previewed(body);
    expect(row.provider?.id).toBe('fal');
    expect(row.priceEntry).toMatchObject({ unit: 'block', usd: 0.5, blockSeconds: 5 });
    expect(row.price).toBe(2);
    const got = await charged(body);
    expect(got.provider).toBe('fal');
    expect(got.price).toBe(row.price);
  });

  it("fal's Kling 2.1 text-to-video for 10 s: Master's 5 s base plus five further seconds, $2.80 previewed and charged", async () => {
    // fal makes Kling 2.1 from text only with its Master endpoint, at Master's price.
    const body = { model: 'kling/v2.1', prompt: 'a fox in the snow', size: '720p', duration: 10, provider: 'fal' };
    const row = await previewed(body);
    expect(row.priceEntry).toEqual({ unit: 'video', usd: 1.4, duration: 5, extraSecondUsd: 0.28, startFrame: false });
    expect(row.price).toBe(2.8);
    expect((await charged(body)).price).toBe(2.8);
  });

  it("OpenAI's image: previewed per image, charged by the answer's tokens at the catalog's token rates", async () => {
    const prompt = 'a lighthouse at dawn, watercolour';
    const body = { model: 'openai/gpt-image-1', prompt, size: '1024x1024', provider: 'openai' };
    const row = await previewed(body);
    expect(row.price).toBe(0.042);
    const res = await c.call('POST', '/images/generations', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The fake counts a token per 4 characters of prompt and 1,056 tokens for a medium square image.
    const textTokens = Math.ceil(prompt.length / 4);
    expect(res.body.price).toBeCloseTo((textTokens * 5 + 1056 * 40) / 1e6, 6);
  });

  it("GET /models shows each offer's table; the usage ledger holds exactly what was charged", async () => {
    const veo = await c.call('GET', '/models/google%2Fveo-3');
    const offers = veo.body.result.providers as Array<{ id: string; price: number; prices?: unknown[] }>;
    expect(offers.find((o) => o.id === 'fal')).toMatchObject({
      price: 0.4,
      prices: [
        { unit: 'second', usd: 0.2, audio: false },
        { unit: 'second', usd: 0.4, audio: true },
      ],
      priceVerified: true,
    });
    const providers = await c.call('GET', '/providers/luma');
    const ray = (providers.body.result.offers as Array<{ model: string; prices?: unknown[] }>).find(
      (o) => o.model === 'luma/ray-2',
    );
    expect(ray?.prices).toEqual([
      { unit: 'video', usd: 0.71, duration: 5 },
      { unit: 'video', usd: 1.27, duration: 9 },
    ]);
    const usage = await c.call('GET', '/usage');
    const openaiCharge = (Math.ceil('a lighthouse at dawn, watercolour'.length / 4) * 5 + 1056 * 40) / 1e6;
    expect(usage.body.result.usage.cost.total).toBeCloseTo(3.2 + 1.6 + 1.27 + 2 + 2.8 + openaiCharge, 6);
  });
});
