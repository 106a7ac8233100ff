import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFalFake } from '../../fakes/providers/fal.ts';
import type { FalFake } from '../../fakes/providers/fal.ts';
import { startLumaFake } from '../../fakes/providers/luma.ts';
import { startReplicateFake } from '../../fakes/providers/replicate.ts';
import type { ReplicateFake } from '../../fakes/providers/replicate.ts';
import type { RunningFake } from '../../fakes/providers/types.ts';
import { startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * What the service sends the providers, through their contract fakes, which refuse what the real
 * services refuse (docs/providers.md, "Request schemas"): the creator's aspect ratio as chosen, a
 * proper ratio at 480p, a ratio a provider does not take routed elsewhere, and an aborted
 * prediction falling back.
 */
let fal: FalFake;
let replicate: ReplicateFake;
let luma: RunningFake;
let t: TestService;
let c: TestClient;

beforeAll(async () => {
  [fal, replicate, luma] = await Promise.all([startFalFake(), startReplicateFake(), startLumaFake()]);
  t = await startTestService({
    providerKeys: { fal: fal.key, replicate: replicate.key, luma: luma.key },
    providerBaseUrls: { fal: fal.baseUrl, replicate: replicate.baseUrl, luma: luma.baseUrl },
    remoteTimings: { pollInitialMs: 10, pollMaxMs: 20, jitter: 0, stallMs: 5_000 },
  });
  c = await t.client('ines', 'enterprise');
});
afterAll(async () => {
  await t.stop();
  await Promise.all([fal.close(), replicate.close(), luma.close()]);
});
beforeEach(() => {
  for (const fake of [fal, replicate, luma]) fake.scenario = 'succeed';
});

/** The input of the last job the fake accepted. */
function lastInput(fake: FalFake | ReplicateFake): Record<string, unknown> {
  return [...fake.inputs.values()].at(-1) as Record<string, unknown>;
}

describe('requests the providers accept', () => {
  it("Veo 3 Fast asked 9:16 goes out as 9:16, not the size's 16:9", async () => {
    const res = await c.call('POST', '/videos/generations', {
      model: 'google/veo-3-fast',
      prompt: 'a lighthouse keeper climbs the stairs',
      size: '720p',
      duration: 8,
      aspect_ratio: '9:16',
      provider: 'fal',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(lastInput(fal)).toMatchObject({ aspect_ratio: '9:16', duration: '8s' });
  });

  it('Wan 2.2 at 480p asks fal for 16:9, not 427:240 (which fal refuses)', async () => {
    const res = await c.call('POST', '/videos/generations', {
      model: 'wan/v2.2',
      prompt: 'a heron lifts off a misty pond',
      size: '480p',
      duration: 5,
      provider: 'fal',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(lastInput(fal)).toMatchObject({ aspect_ratio: '16:9', resolution: '480p' });
  });

  it('Ray 2 asked 1:1 is routed to a provider that takes it, and fal by name is refused naming its ratios', async () => {
    const before = fal.submissions();
    const res = await c.call('POST', '/videos/generations', {
      model: 'luma/ray-2',
      prompt: 'a paper boat on a puddle',
      size: '720p',
      duration: 5,
      aspect_ratio: '1:1',
      routing: 'cheapest',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.stats.providerId).not.toBe('fal');
    expect(fal.submissions()).toBe(before);
    const named = await c.call('POST', '/videos/generations', {
      model: 'luma/ray-2',
      prompt: 'a paper boat on a puddle',
      size: '720p',
      duration: 5,
      aspect_ratio: '1:1',
      provider: 'fal',
    });
    // Routing's answer for a provider that cannot render the request (docs/api.md): unsupported_parameter.
    expect(named.status).toBe(422);
    expect(named.body.error.type).toBe('unsupported_parameter');
    expect(JSON.stringify(named.body)).toContain('16:9, 9:16, 4:3, 3:4, 21:9, 9:21 (not 1:1)');
  });

  it('an aborted Replicate prediction falls back to the next provider', async () => {
    replicate.scenario = 'aborted';
    const res = await c.call('POST', '/videos/generations', {
      model: 'wan/v2.2',
      prompt: 'a heron lifts off a misty pond',
      size: '480p',
      duration: 5,
      routing: 'cheapest',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.stats).toMatchObject({ providerId: 'fal', retries: 1 });
  });
});

describe("a body one provider's schema refuses", () => {
  it('falls back to a provider that takes it, and is a 400 naming the field when none does', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-schema-fallback-'));
    // The operator's catalog gives fal's Ray 2 a schema (as a sync would keep it) that takes 9 s only.
    const narrow = { type: 'object', properties: { duration: { enum: ['9s'] } } };
    // fal priced lowest, so that routing tries it first.
    const patch = (provider: string, path: string) => ({
      provider,
      price: 0.001,
      prices: [{ unit: 'second', usd: 0.001 }],
      priceAsOf: '2026-12-06',
      priceSource: 'https://fal.ai/models/fal-ai/luma-dream-machine/ray-2',
      inputSchemas: { [path]: narrow },
    });
    const catalog = (offers: object[]) => ({ version: 1, models: [{ id: 'luma/ray-2', offers }] });
    await writeFile(
      join(dataDir, 'catalog.json'),
      JSON.stringify(catalog([patch('fal', 'fal-ai/luma-dream-machine/ray-2')])),
    );
    const s = await startTestService({
      dataDir,
      nodes: 1, // one node: the operator catalog is written into this data directory only
      providerKeys: { fal: fal.key, luma: luma.key },
      providerBaseUrls: { fal: fal.baseUrl, luma: luma.baseUrl },
      remoteTimings: { pollInitialMs: 10, pollMaxMs: 20, jitter: 0, stallMs: 5_000 },
    });
    try {
      const client = await s.client('ines', 'enterprise');
      const body = { model: 'luma/ray-2', prompt: 'a paper boat on a puddle', size: '720p', duration: 5 };
      const before = fal.submissions();
      const res = await client.call('POST', '/videos/generations', { ...body, routing: 'cheapest' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.stats).toMatchObject({ providerId: 'luma', retries: 1 });
      expect(fal.submissions()).toBe(before);
      const named = await client.call('POST', '/videos/generations', { ...body, provider: 'fal' });
      expect(named.status).toBe(400);
      expect(named.body.error.message).toContain("duration '5s' is not accepted (allowed: 9s)");
    } finally {
      await s.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
