import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake } from '../../fakes/providers/fal.ts';
import type { FalFake } from '../../fakes/providers/fal.ts';
import { startReplicateFake } from '../../fakes/providers/replicate.ts';
import type { ReplicateFake } from '../../fakes/providers/replicate.ts';
import { startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * The end frame (the model's image parameter `end_image_url`, docs/api.md "Model parameters"):
 * resolved by the service as a start frame is, and handed to fal through its storage under fal's
 * own field, never as the service's URL (fal cannot reach it); refused without a start frame.
 */
let fal: FalFake;
let replicate: ReplicateFake;
let t: TestService;
let c: TestClient;

beforeAll(async () => {
  [fal, replicate] = await Promise.all([startFalFake(), startReplicateFake()]);
  t = await startTestService({
    providerKeys: { fal: fal.key, replicate: replicate.key },
    providerBaseUrls: { fal: fal.baseUrl, replicate: replicate.baseUrl },
    remoteTimings: { pollInitialMs: 10, pollMaxMs: 20, jitter: 0, stallMs: 5_000 },
  });
  c = await t.client('ines', 'enterprise');
});
afterAll(async () => {
  await t.stop();
  await Promise.all([fal.close(), replicate.close()]);
});

/** A still of the caller's own, by its URL on the service. */
async function still(prompt: string): Promise<string> {
  const res = await c.call('POST', '/images/generations', { model: 'clipdesk/still', prompt });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data[0].url as string;
}

const hailuo = { model: 'minimax/hailuo-02', prompt: 'the tide comes in', size: '720p', duration: 6 };

describe('an end frame', () => {
  it('reaches fal as its own end_image_url, uploaded to fal storage like the start frame', async () => {
    const [start, end] = await Promise.all([still('a dry beach'), still('a flooded beach')]);
    const res = await c.call('POST', '/videos/generations', {
      ...hailuo,
      image_url: start,
      end_image_url: end,
      provider: 'fal',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.stats.ignoredParameters ?? []).not.toContain('end_image_url');
    const input = [...fal.inputs.values()].at(-1) as Record<string, unknown>;
    const endUrl = input['end_image_url'];
    expect(typeof endUrl).toBe('string');
    // fal's own storage URL, not the service's: fal could not fetch from this service.
    expect(String(endUrl).startsWith(`${fal.baseUrl}/fake-storage/files/`)).toBe(true);
    expect(String(endUrl)).not.toContain(new URL(end).host);
    expect(input['image_url']).not.toBe(endUrl);
    const uploaded = fal.uploads.get(String(endUrl));
    expect(uploaded?.mime).toBe('image/png');
    expect(uploaded?.bytes.subarray(1, 4).toString()).toBe('PNG');
  });

  it('is refused on text-to-video (without a start frame), before any provider is asked', async () => {
    const before = fal.submissions();
    const end = await still('a flooded beach at dusk');
    const res = await c.call('POST', '/videos/generations', { ...hailuo, end_image_url: end, provider: 'fal' });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toContain('end_image_url: an end frame needs a start frame (image_url)');
    expect(fal.submissions()).toBe(before);
  });

  it('that is not a picture of the caller is refused by its own name', async () => {
    const start = await still('a dry beach at noon');
    const res = await c.call('POST', '/videos/generations', {
      ...hailuo,
      image_url: start,
      end_image_url: `${new URL(start).origin}/v1/media/med_doesnotexist`,
      provider: 'fal',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toContain('end_image_url');
  });

  it('must be a URL (the image parameter type)', async () => {
    const start = await still('a dry beach at dawn');
    const body = { ...hailuo, image_url: start, end_image_url: 42, provider: 'fal' };
    const res = await c.call('POST', '/videos/generations', body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('end_image_url: minimax/hailuo-02 takes an image URL (http or https)');
  });

  it("reaches Replicate's Hailuo 02 as last_frame_image, a Replicate file URL", async () => {
    const [start, end] = await Promise.all([still('a dry field'), still('a field of snow')]);
    const res = await c.call('POST', '/videos/generations', {
      ...hailuo,
      image_url: start,
      end_image_url: end,
      provider: 'replicate',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const input = [...replicate.inputs.values()].at(-1) as Record<string, unknown>;
    const endUrl = String(input['last_frame_image']);
    // A file of Replicate's files API (the fake's), not the service's URL.
    expect(endUrl).toMatch(/\/v1\/files\/[0-9a-f]+$/);
    expect(endUrl).not.toBe(end);
    expect(replicate.uploads.get(endUrl)?.mime).toBe('image/png');
    expect(input).not.toHaveProperty('end_image_url');
  });

  it('is never sent to an offer that does not list it: Replicate Seedance by name is refused, routing picks fal', async () => {
    const [start, end] = await Promise.all([still('a calm lake'), still('a frozen lake')]);
    const seedance = { model: 'bytedance/seedance-1-lite', prompt: 'winter comes', size: '720p', duration: 5 };
    const before = replicate.submissions();
    const named = await c.call('POST', '/videos/generations', {
      ...seedance,
      image_url: start,
      end_image_url: end,
      provider: 'replicate',
    });
    expect(named.status, JSON.stringify(named.body)).toBe(422);
    expect(JSON.stringify(named.body)).toContain("provider 'replicate' cannot honour: end_image_url");
    expect(replicate.submissions()).toBe(before);

    const routed = await c.call('POST', '/videos/generations', {
      ...seedance,
      image_url: start,
      end_image_url: end,
      routing: 'compatible',
    });
    expect(routed.status, JSON.stringify(routed.body)).toBe(200);
    expect(routed.body.stats.providerId).toBe('fal');
    expect(([...fal.inputs.values()].at(-1) as Record<string, unknown>)['end_image_url']).toBeTruthy();
  });
});
