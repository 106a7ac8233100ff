import { readdir, readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFalFake } from '../../fakes/providers/fal.ts';
import { startLumaFake } from '../../fakes/providers/luma.ts';
import { startReplicateFake } from '../../fakes/providers/replicate.ts';
import type { RunningFake } from '../../fakes/providers/types.ts';
import { mediaStreams } from '../../support/media-streams.ts';
import { startTestService } from './helpers.ts';
import type { ApiResponse, TestClient, TestService } from './helpers.ts';

/**
 * The service in front of real providers' contract fakes (fal, Replicate, Luma), each reached by
 * its official SDK through the base-URL setting: routing across providers at different prices and
 * with different features, fallback, a removed key, a content-policy refusal, the sound of a clip
 * surviving the pipeline, and no provider key anywhere in responses or the data directory.
 */
let fal: RunningFake;
let replicate: RunningFake;
let luma: RunningFake;
let t: TestService;
let c: TestClient;
const answers: string[] = [];

async function call(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  const res = await c.call(method, path, body);
  answers.push(JSON.stringify(res.body));
  return res;
}

beforeAll(async () => {
  [fal, replicate, luma] = await Promise.all([startFalFake(), startReplicateFake(), startLumaFake()]);
  t = await startTestService({
    providerKeys: { fal: fal.key, replicate: replicate.key, luma: luma.key },
    providerBaseUrls: { fal: fal.baseUrl, replicate: replicate.baseUrl, luma: luma.baseUrl },
    remoteTimings: { pollInitialMs: 10, pollMaxMs: 20, jitter: 0, stallMs: 5_000 },
  });
  c = await t.client('maria', 'enterprise');
});
afterAll(async () => {
  await t.stop();
  await Promise.all([fal.close(), replicate.close(), luma.close()]);
});
beforeEach(() => {
  for (const fake of [fal, replicate, luma]) fake.scenario = 'succeed';
});

const WAN = { model: 'wan/v2.2', prompt: 'a heron lifts off a misty pond', size: '480p', duration: 5 };

describe('routing across real providers', () => {
  it('cheapest takes the cheaper provider, and the clip arrives with its sound', async () => {
    const before = { fal: fal.submissions(), replicate: replicate.submissions() };
    const res = await call('POST', '/videos/generations', { ...WAN, routing: 'cheapest' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // wan/v2.2: Replicate at $0.02/s against fal at $0.08/s.
    expect(res.body.stats).toMatchObject({ providerId: 'replicate', retries: 0 });
    expect(res.body.price).toBeCloseTo(0.02 * 5, 6);
    expect(replicate.submissions() - before.replicate).toBe(1);
    expect(fal.submissions() - before.fal).toBe(0);

    const item = res.body.data[0];
    const listed = await call('GET', `/media/${item.id}`);
    expect(listed.status).toBe(200);
    // The provider's clip has an AAC track: it survives into both renditions.
    const dir = await mkdtemp(join(tmpdir(), 'provider-fakes-'));
    try {
      for (const format of item.formats as Array<{ mime: string; url: string }>) {
        const file = join(dir, format.mime.replace('/', '.'));
        await writeFile(file, Buffer.from(await (await fetch(format.url)).arrayBuffer()));
        const streams = await mediaStreams(file);
        expect(streams.video, format.mime).not.toBeNull();
        expect(streams.audio?.codec, format.mime).toBe(format.mime === 'video/mp4' ? 'aac' : 'opus');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('compatible keeps a start frame on a provider that can take it, at the next price', async () => {
    // A start frame of the caller's own: a procedural still.
    const still = await call('POST', '/images/generations', { model: 'clipdesk/still', prompt: 'a lighthouse' });
    expect(still.status).toBe(200);
    const imageUrl = still.body.data[0].url as string;
    const ray = { model: 'luma/ray-2', prompt: 'waves break on the lighthouse rocks', size: '720p', duration: 5 };

    // Without a start frame the cheapest Ray 2 is Luma's own ($0.142/s).
    const plain = await call('POST', '/videos/generations', { ...ray, routing: 'cheapest' });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body.stats.providerId).toBe('luma');

    // Luma cannot receive a start frame privately: compatible goes to Replicate ($0.18/s), not fal ($0.20/s).
    const withFrame = await call('POST', '/videos/generations', { ...ray, image_url: imageUrl, routing: 'compatible' });
    expect(withFrame.status, JSON.stringify(withFrame.body)).toBe(200);
    expect(withFrame.body.stats.providerId).toBe('replicate');
    expect(withFrame.body.price).toBeCloseTo(0.18 * 5, 6);

    // Naming Luma for it is a clear 422.
    const named = await call('POST', '/videos/generations', { ...ray, image_url: imageUrl, provider: 'luma' });
    expect(named.status).toBe(422);
    expect(named.body.error.message).toMatch(/luma/i);
  });

  it('falls back to the next provider when one fails, and charges only the one that made the clip', async () => {
    replicate.scenario = 'server_error';
    const before = fal.submissions();
    const res = await call('POST', '/videos/generations', { ...WAN, routing: 'cheapest' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.stats.providerId).toBe('fal');
    expect(res.body.stats.retries).toBeGreaterThanOrEqual(1);
    // fal's 480p rate, half its 720p one (docs/providers.md, "Where each price comes from").
    expect(res.body.price).toBeCloseTo(0.04 * 5, 6);
    expect(fal.submissions() - before).toBe(1);
  });

  it('a content-policy refusal is a 422 with the provider reason, and nothing is charged', async () => {
    const count = (await call('GET', '/media?user=me&limit=1')).body.result.total as number;
    fal.scenario = 'content_policy';
    const res = await call('POST', '/videos/generations', { ...WAN, provider: 'fal' });
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe('content_policy_violation');
    expect(res.body.error.message).toMatch(/fal/i);
    expect((await call('GET', '/media?user=me&limit=1')).body.result.total).toBe(count);
  });

  it('a removed key stops routing to the provider at once', async () => {
    await t.service.setProviderKey('replicate', null);
    try {
      const before = replicate.submissions();
      const res = await call('POST', '/videos/generations', { ...WAN, routing: 'cheapest' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.stats.providerId).toBe('fal');
      expect(replicate.submissions()).toBe(before);
      const providers = (await call('GET', '/providers?limit=50')).body.result.providers as Array<{
        id: string;
        configured: boolean;
      }>;
      expect(providers.find((p) => p.id === 'replicate')?.configured).toBe(false);
    } finally {
      await t.service.setProviderKey('replicate', replicate.key);
    }
  });

  it('no provider key appears in any response or in any file of the data directory', async () => {
    await call('GET', '/providers?limit=50');
    await call('GET', '/models?limit=100');
    const keys = [fal.key, replicate.key, luma.key];
    for (const answer of answers) for (const key of keys) expect(answer).not.toContain(key);
    for (const file of await filesUnder(t.dataDir)) {
      const text = (await readFile(file)).toString('latin1');
      for (const key of keys) expect(text, file).not.toContain(key);
    }
  });
});

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}
