import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../../server/index.ts';
import type { ProviderAdapter, RemoteProviderId } from '../../../server/providers/remote/contract.ts';
import { ProviderError } from '../../../server/providers/remote/contract.ts';
import type { TestClient, TestService } from './helpers.ts';
import { startTestService } from './helpers.ts';

const FAL_KEY = 'fal-integration-key-Qw3e';
const REPLICATE_KEY = 'r8_integration-key-Rt5y';

/**
 * An adapter that only answers testKey (no generation runs in these tests): the key it accepts is
 * the one given here, like a provider's auth endpoint.
 */
function keyCheckingAdapter(id: RemoteProviderId, accepted: string): ProviderAdapter {
  const never = () => Promise.reject(new ProviderError(id, 'failed', `${id}: not used in this test`));
  return {
    id,
    name: id === 'fal' ? 'fal.ai' : 'Replicate',
    description: `${id} (test adapter)`,
    envKey: id === 'fal' ? 'FAL_KEY' : 'REPLICATE_API_TOKEN',
    defaultBaseUrl: `https://${id}.example`,
    webhooks: false,
    startImage: 'upload',
    testKey: (settings) =>
      settings.apiKey === accepted
        ? Promise.resolve()
        : Promise.reject(new ProviderError(id, 'auth', `${id} refused the key`, { status: 401 })),
    submit: never,
    poll: never,
    cancel: never,
  };
}

describe('provider keys and records in the running service', () => {
  let svc: TestService;
  let client: TestClient;
  const everything: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await client.call(method, path, body);
    everything.push(JSON.stringify(res.body));
    return res;
  };

  beforeAll(async () => {
    svc = await startTestService({
      providerEnv: {},
      providerKeys: { fal: FAL_KEY },
      providerAdapters: {
        fal: keyCheckingAdapter('fal', FAL_KEY),
        replicate: keyCheckingAdapter('replicate', REPLICATE_KEY),
      },
    });
    client = await svc.client('maria');
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('/providers shows configured, status and offers with prices, and never a key', async () => {
    const res = await call('GET', '/providers?limit=50');
    expect(res.status).toBe(200);
    const providers = res.body.result.providers as Array<Record<string, unknown>>;
    const fal = providers.find((p) => p.id === 'fal');
    expect(fal).toMatchObject({ kind: 'remote', configured: true, enabled: true, available: true, status: 'ok' });
    const kling = (fal?.offers as Array<Record<string, unknown>>).find((o) => o.model === 'kling/v2.1');
    expect(kling).toMatchObject({ price: 0.056, priceUnit: 'second', durations: [5, 10], priceAsOf: '2026-12-06' });
    expect(kling?.priceSource).toMatch(/^https:\/\/fal\.ai\//);
    expect(providers.find((p) => p.id === 'replicate')).toMatchObject({ configured: false, available: false });
    expect(providers.find((p) => p.id === 'local-swift')).toMatchObject({ kind: 'local', status: 'available' });
    // Every provider this build has an adapter for is listed, configured or not.
    expect(providers.find((p) => p.id === 'runway')).toMatchObject({ configured: false, available: false });
    const one = await call('GET', '/providers/fal');
    expect(one.body.result).toMatchObject({ id: 'fal', configured: true });
  });

  it('/models lists the AI models of configured providers only, with real prices', async () => {
    const res = await call('GET', '/models?limit=100');
    const models = res.body.result.models as Array<{ id: string; providers: Array<{ id: string; price: number }> }>;
    const ids = models.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['clipdesk/motion', 'kling/v2.1', 'google/veo-3', 'wan/v2.2']));
    expect(ids).not.toContain('runway/gen-4-turbo');
    expect(ids).not.toContain('openai/gpt-image-1');
    expect(models.find((m) => m.id === 'kling/v2.1')?.providers.map((p) => p.id)).toEqual(['fal']);
    const veo = await call('GET', '/models/google%2Fveo-3');
    expect(veo.body.result).toMatchObject({
      id: 'google/veo-3',
      version: '1',
      parameters: { audio: { type: 'boolean' } },
    });
  });

  it('validates model parameters and durations, and names unusable providers', async () => {
    const prompt = 'a lighthouse at dusk';
    const badDuration = await call('POST', '/videos/generations', { model: 'kling/v2.1', prompt, duration: 7 });
    expect(badDuration.status).toBe(400);
    expect(badDuration.body.message).toContain('5 or 10 seconds');
    const badParam = await call('POST', '/videos/generations', { model: 'kling/v2.1', prompt, cfg_scale: 3 });
    expect(badParam.status).toBe(400);
    expect(badParam.body.message).toContain('cfg_scale');
    const named = await call('POST', '/videos/generations', { model: 'kling/v2.1', prompt, provider: 'replicate' });
    expect(named.status).toBe(503);
    expect(named.body.message).toContain('no key');
    const stranger = await call('POST', '/videos/generations', {
      model: 'kling/v2.1',
      prompt,
      routing: 'compatible',
      warp_factor: 9,
    });
    expect(stranger.status).toBe(422);
  });

  it('providerStatus shows the last 4 characters and where the key comes from; testProviderKey tries it', async () => {
    const status = await svc.service.providerStatus();
    expect(status.find((p) => p.id === 'fal')).toMatchObject({
      configured: true,
      keySource: 'app',
      last4: 'Qw3e',
      enabled: true,
      defaultBaseUrl: 'https://fal.example',
      health: { status: 'ok' },
    });
    expect(status.find((p) => p.id === 'replicate')).toMatchObject({ configured: false });
    expect(JSON.stringify(status)).not.toContain(FAL_KEY);
    expect(await svc.service.testProviderKey('fal')).toEqual({ ok: true });
    expect(await svc.service.testProviderKey('fal', 'fal-wrong-key-0000')).toEqual({
      ok: false,
      message: 'fal.ai refused the key',
    });
    expect(await svc.service.testProviderKey('replicate')).toMatchObject({
      ok: false,
      message: expect.stringContaining('no key'),
    });
    expect(await svc.service.testProviderKey('fal', 'two words')).toMatchObject({
      ok: false,
      message: expect.stringContaining('whitespace'),
    });
  });

  it('keys and switches change live: a removed key stops routing at once', async () => {
    await svc.service.setProviderKey('replicate', REPLICATE_KEY);
    let models = (await call('GET', '/models?limit=100')).body.result.models as Array<{
      id: string;
      providers: Array<{ id: string }>;
    }>;
    expect(
      models
        .find((m) => m.id === 'kling/v2.1')
        ?.providers.map((p) => p.id)
        .sort(),
    ).toEqual(['fal', 'replicate']);
    await svc.service.setProviderEnabled('replicate', false);
    expect((await call('GET', '/providers/replicate')).body.result).toMatchObject({ enabled: false, available: false });
    await svc.service.setProviderKey('fal', null);
    await svc.service.setProviderKey('replicate', null);
    models = (await call('GET', '/models?limit=100')).body.result.models;
    expect(models.some((m) => m.id === 'kling/v2.1')).toBe(false);
    const res = await call('POST', '/videos/generations', { model: 'kling/v2.1', prompt: 'p' });
    expect(res.status).toBe(503);
    await expect(svc.service.setProviderBaseUrl('fal', 'ftp://mirror.example')).rejects.toThrow(/http or https/);
    await expect(svc.service.setProviderKey('fal', 'has\nnewline')).rejects.toThrow(/line break/);
  });

  it('no key is in any response or any file of the data directory', async () => {
    for (const body of everything) {
      expect(body).not.toContain(FAL_KEY);
      expect(body).not.toContain(REPLICATE_KEY);
    }
    const files = await readdir(svc.dataDir, { recursive: true, withFileTypes: true });
    for (const f of files.filter((e) => e.isFile())) {
      const content = await readFile(join(f.parentPath, f.name)).catch(() => Buffer.alloc(0));
      expect(content.includes(FAL_KEY), f.name).toBe(false);
      expect(content.includes(REPLICATE_KEY), f.name).toBe(false);
    }
  });
});

describe('bad provider settings and catalog files stop the service at start', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-bad-start-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a base URL that is not http(s), or a key with a line break', async () => {
    await expect(
      startService({
        dataDir,
        sweepIntervalMs: 0,
        providerEnv: { CLIPDESK_REPLICATE_BASE_URL: 'ftp://files.example' },
      }),
    ).rejects.toThrow(/CLIPDESK_REPLICATE_BASE_URL for replicate must be an http or https URL/);
    const error = await startService({ dataDir, sweepIntervalMs: 0, providerEnv: { FAL_KEY: `${FAL_KEY}\n` } }).catch(
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/FAL_KEY for fal contains whitespace or a line break/);
    expect((error as Error).message).not.toContain(FAL_KEY);
  });

  it('a catalog file that does not parse names the file and line', async () => {
    const file = join(dataDir, 'catalog.json');
    await writeFile(file, '{\n  "version": 1,\n  "models": [,]\n}\n');
    await expect(startService({ dataDir, sweepIntervalMs: 0, providerEnv: {} })).rejects.toThrow(`${file}:3:14`);
    await rm(file);
  });
});
