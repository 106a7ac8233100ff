import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFalFake } from '../../fakes/providers/fal.ts';
import type { FalFake } from '../../fakes/providers/fal.ts';
import { startFalPlatformFake } from '../../fakes/providers/fal-platform.ts';
import type { FalPlatformFake } from '../../fakes/providers/fal-platform.ts';
import { startReplicateFake } from '../../fakes/providers/replicate.ts';
import type { ReplicateFake } from '../../fakes/providers/replicate.ts';
import { untilTrue } from '../../support/until.ts';
import { onPostgres, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * The catalog from the providers' own listings (docs/providers.md, "Syncing the catalog"): a sync
 * against the fal platform API's and Replicate's contract fakes, then the real service's GET
 * /models; a generation on a synced model with its own parameter; a sync with fal unreachable.
 * On the PostgreSQL pass the service is two nodes: the sync runs on one, the other reloads the
 * catalog from the database.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
let platform: FalPlatformFake;
let fal: FalFake;
let replicate: ReplicateFake;
let t: TestService;
let c: TestClient;

interface Offer {
  id: string;
  price: number;
  priceVerified?: boolean;
  priceAsOf?: string;
  priceSource?: string;
  priceNote?: string;
  prices?: unknown[];
  parameters?: string[];
}
interface Model {
  id: string;
  media: string;
  description: string;
  parameters: Record<string, unknown>;
  providers: Offer[];
}

async function models(): Promise<Model[]> {
  const res = await c.call('GET', '/models?limit=1000');
  expect(res.status).toBe(200);
  return res.body.result.models as Model[];
}

beforeAll(async () => {
  [platform, fal, replicate] = await Promise.all([startFalPlatformFake(), startFalFake(), startReplicateFake()]);
  t = await startTestService({
    providerKeys: { fal: fal.key, replicate: replicate.key },
    providerBaseUrls: { fal: fal.baseUrl, replicate: replicate.baseUrl },
    providerEnv: { CLIPDESK_FAL_PLATFORM_URL: platform.baseUrl },
    catalogCheckMs: 50,
    remoteTimings: { pollInitialMs: 10, pollMaxMs: 20, jitter: 0, stallMs: 5_000 },
  });
  c = await t.client('maria', 'enterprise');
});
afterAll(async () => {
  await t.stop();
  await Promise.all([platform.close(), fal.close(), replicate.close()]);
});

describe('catalog sync', () => {
  it('lists the providers’ models with verified, dated fal prices, one model per model', async () => {
    const report = await t.service.syncCatalog();
    expect(report).toMatchObject({ written: true, keptLast: false });
    const [falLine, replicateLine] = report.providers;
    expect(falLine).toMatchObject({ provider: 'fal', ok: true });
    expect(falLine!.prices).toBeGreaterThan(100);
    expect(replicateLine).toMatchObject({ provider: 'replicate', ok: true, prices: 0 });
    // Every node reloads (on PostgreSQL the other one from the database): requests alternate.
    let listed: Model[] = [];
    await untilTrue('every node lists the synced catalog', async () => {
      const [a, b] = [await models(), await models()];
      listed = a;
      return [a, b].every((m) => m.filter((x) => x.media === 'video').length >= 60);
    });
    expect(listed.filter((m) => m.media === 'image').length).toBeGreaterThanOrEqual(20);

    const day = report.at.slice(0, 10);
    // A built-in price rule one listed figure cannot say (a table by sound or size, a base plus a
    // rate, a block) is kept, never flattened, and the report names the unit it was listed in.
    const kept = new Set((falLine!.unpricedModels ?? []).filter((u) => u.kept === 'builtin').map((u) => u.model));
    expect(falLine!.unpricedModels).toContainEqual({
      model: 'google/veo-3',
      endpoint: 'fal-ai/veo3',
      unit: 'seconds',
      kept: 'builtin',
    });
    const veo = listed.find((m) => m.id === 'google/veo-3')?.providers.find((p) => p.id === 'fal');
    expect(veo?.prices).toEqual([
      { unit: 'second', usd: 0.2, audio: false },
      { unit: 'second', usd: 0.4, audio: true },
    ]);
    const falOffers = listed.flatMap((m) => m.providers.filter((p) => p.id === 'fal' && !kept.has(m.id)));
    expect(falOffers.length).toBeGreaterThanOrEqual(80);
    for (const offer of falOffers) {
      expect(offer).toMatchObject({ priceVerified: true, priceAsOf: day });
      expect(offer.priceSource).toMatch(new RegExp(`^${platform.baseUrl}/models/pricing\\?endpoint_id=`));
    }
    // Offered by fal and by Replicate: one model, two offers; Replicate's figure is kept by hand, flagged.
    const kling = listed.find((m) => m.id === 'kling/v2.5-turbo-pro');
    expect(kling?.providers.map((p) => p.id).sort()).toEqual(['fal', 'replicate']);
    expect(kling?.providers.find((p) => p.id === 'replicate')).toMatchObject({ priceVerified: false });
    expect(kling?.parameters).toMatchObject({ cfg_scale: { type: 'number', min: 0, max: 1 } });
    // Untrusted text: the oversized description is bounded plain text.
    const mochi = listed.find((m) => m.id === 'fal-ai/mochi-v1');
    expect(mochi?.description.length).toBeLessThanOrEqual(500);
    expect(mochi?.description).not.toContain('<b>');
    expect(mochi?.description).not.toContain(String.fromCharCode(7));
    // The deprecated model is not offered; a Replicate-only model without a price is not either.
    expect(listed.some((m) => m.id === 'fal-ai/kling-video-v2.6-pro')).toBe(false);
    expect(listed.some((m) => m.id === 'lightricks/ltx-video')).toBe(false);
  });

  // The body is built the same whatever holds the rows: the PostgreSQL pass leaves the render out.
  it.skipIf(onPostgres)('a synced model’s own parameter reaches the provider under the model’s own name', async () => {
    const before = replicate.inputs.size;
    const res = await c.call('POST', '/videos/generations', {
      model: 'kling/v2.5-turbo-pro',
      prompt: 'a paper boat on a rainy street',
      duration: 5,
      size: '720p',
      provider: 'fal',
      cfg_scale: 0.7,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const input = [...fal.inputs.values()].at(-1) as Record<string, unknown>;
    expect(input).toMatchObject({ prompt: 'a paper boat on a rainy street', duration: '5', cfg_scale: 0.7 });
    expect(replicate.inputs.size).toBe(before);
  });

  it('a sync with fal unreachable keeps fal’s part of the last catalog and says so', async () => {
    platform.down = true;
    try {
      const report = await t.service.syncCatalog();
      expect(report).toMatchObject({ written: true, keptLast: true });
      expect(report.providers.find((p) => p.provider === 'fal')).toMatchObject({ ok: false });
      expect(report.providers.find((p) => p.provider === 'fal')?.error).not.toContain(fal.key);
      const listed = await models();
      expect(listed.filter((m) => m.media === 'video').length).toBeGreaterThanOrEqual(60);
      expect(listed.find((m) => m.id === 'kling/v2.5-turbo-pro')?.providers).toHaveLength(2);
    } finally {
      platform.down = false;
    }
  });
});

describe('the scheduled sync', () => {
  it('runs an interval after start, never at start, and every node lists its catalog', async () => {
    const scheduled = await startTestService({
      providerKeys: { fal: fal.key },
      providerBaseUrls: { fal: fal.baseUrl },
      providerEnv: { CLIPDESK_FAL_PLATFORM_URL: platform.baseUrl },
      catalogCheckMs: 50,
      // 1.8 s.
      catalogSyncIntervalHours: 0.0005,
    });
    try {
      const client = await scheduled.client('ines', 'enterprise');
      const videoModels = async () => {
        const res = await client.call('GET', '/models?limit=1000');
        return (res.body.result.models as Model[]).filter((m) => m.media === 'video').length;
      };
      const asked = platform.requests.length;
      expect(await videoModels()).toBeLessThan(60);
      expect(platform.requests.length).toBe(asked);
      await untilTrue('the scheduled sync', async () => (await videoModels()) >= 60 && (await videoModels()) >= 60);
    } finally {
      await scheduled.stop();
    }
  });
});

/** The real CLI with the project's Node, provider keys only from `env`. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  const clean: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of ['FAL_KEY', 'REPLICATE_API_TOKEN']) if (!(name in env)) delete clean[name];
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('close', (code) => done({ code, stdout }));
  });
}

describe.skipIf(onPostgres)('clipdesk-service catalog sync', () => {
  it('writes DATA/catalog.json, says what it read, and exits 1 when no provider could be read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'catalog-sync-cli-'));
    try {
      const env = { FAL_KEY: platform.key, CLIPDESK_FAL_PLATFORM_URL: platform.baseUrl };
      const ok = await cli(['catalog', 'sync', '--provider', 'fal', '--data', dir, '--json'], env);
      expect(ok.code).toBe(0);
      const report = JSON.parse(ok.stdout) as { written: boolean; models: { video: number } };
      expect(report.written).toBe(true);
      expect(report.models.video).toBeGreaterThanOrEqual(60);
      const written = await readFile(join(dir, 'catalog.json'), 'utf8');
      expect(written).not.toContain(platform.key);

      const refused = await cli(['catalog', 'sync', '--provider', 'fal', '--data', dir], {
        ...env,
        FAL_KEY: 'wrong-key-1234',
      });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain('fal\tnot read: fal refused the key (HTTP 401)');
      expect(refused.stdout).toContain('nothing written');
      expect(await readFile(join(dir, 'catalog.json'), 'utf8')).toBe(written);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
