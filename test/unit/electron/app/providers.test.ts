import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { RPCHandler } from '@orpc/server/fetch';
import type { ProviderRecord } from '../../../../shared/api/model-records.ts';
import type { CatalogSyncReport, SyncedProvider } from '../../../../shared/api/catalog-sync.ts';
import type { AppEvent, IpcClient } from '../../../../shared/ipc/index.ts';
import { EventBus } from '../../../../electron/app/events.ts';
import { engineKeySource, providersHandlers, storedKeySource } from '../../../../electron/app/handlers/providers.ts';
import { createIpcRouter, rpcHandlerOptions } from '../../../../electron/app/router.ts';
import type { ServiceSession } from '../../../../electron/app/types.ts';
import {
  createProviderKeyStore,
  createProviderManager,
  createProviderSettings,
  type EngineProviders,
  type EngineProviderStatus,
  type ProviderManager,
} from '../../../../electron/core/providers/index.ts';
import { SecretStoreUnavailableError, type SecretStore } from '../../../../electron/core/secrets/index.ts';
import { createConfSettingsStore } from '../../../../electron/core/settings/index.ts';
import { createLogger } from '../../../../shared/node/logger.ts';
import { PARTIAL_SYNC_REPORT } from '../../../support/catalog-sync-report.ts';
import { stubHandlers } from '../../../support/ipc-handlers.ts';

// The providers.* routes through the same oRPC handler and input checks both bindings use, on the
// real key store, settings file and provider manager. Two things stand in for what is outside
// main: the OS keychain (a Map; the real one is covered in test/integration/electron/core/providers)
// and the Local engine's provider controls (the names startService's RunningService provides).

function memoryKeychain(available = true): SecretStore & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  const message = 'No OS keychain is available: no Secret Service is running in this session.';
  return {
    entries,
    status: () =>
      Promise.resolve(
        available
          ? { backend: 'secret-service', available: true, message: 'ok' }
          : { backend: 'none', available: false, message },
      ),
    get: (a) => Promise.resolve(available ? (entries.get(a) ?? null) : null),
    set: (a, s) => {
      if (!available) return Promise.reject(new SecretStoreUnavailableError(message));
      entries.set(a, s);
      return Promise.resolve();
    },
    delete: (a) => Promise.resolve(entries.delete(a)),
    info: (a) =>
      Promise.resolve({ hasKey: entries.has(a), last4: entries.get(a)?.slice(-4) ?? null, backend: 'secret-service' }),
  };
}

/** The engine's provider controls, recording what main asked of it. */
function engineControls(): EngineProviders & { calls: unknown[][]; keyWorks: boolean } {
  const state = new Map<string, { key: string | null; enabled: boolean; baseUrl: string | null }>();
  const of = (id: string) => state.get(id) ?? { key: null, enabled: true, baseUrl: null };
  const engine = {
    calls: [] as unknown[][],
    keyWorks: true,
    setProviderKey(id: string, key: string | null) {
      engine.calls.push(['setProviderKey', id, key]);
      state.set(id, { ...of(id), key });
      return Promise.resolve();
    },
    setProviderEnabled(id: string, enabled: boolean) {
      engine.calls.push(['setProviderEnabled', id, enabled]);
      state.set(id, { ...of(id), enabled });
      return Promise.resolve();
    },
    setProviderBaseUrl(id: string, url: string | null) {
      engine.calls.push(['setProviderBaseUrl', id, url]);
      state.set(id, { ...of(id), baseUrl: url });
      return Promise.resolve();
    },
    testProviderKey(id: string) {
      engine.calls.push(['testProviderKey', id]);
      return Promise.resolve(
        engine.keyWorks
          ? ({ ok: true } as const)
          : ({ ok: false, message: 'fal refused the key (401 Unauthorized).' } as const),
      );
    },
    providerStatus(): Promise<EngineProviderStatus[]> {
      return Promise.resolve([
        {
          id: 'fal',
          name: 'fal',
          description: 'Generative media on fal.ai',
          envKey: 'FAL_KEY',
          defaultBaseUrl: 'https://queue.fal.run',
          configured: of('fal').key !== null,
          ...(of('fal').key ? { last4: of('fal').key!.slice(-4) } : {}),
          enabled: of('fal').enabled,
          health: {
            status: 'unhealthy',
            lastError: { class: 'auth', message: 'fal refused the key', at: 'T1' },
            since: 'T0',
          },
          models: ['kling/v2.1', 'veo/3'],
        },
      ]);
    },
  };
  return engine;
}

const builtIn: ProviderRecord = {
  id: 'prov_local_waves',
  slug: 'waves',
  name: 'Waves',
  status: 'available',
  models: ['local/waves'],
  features: ['text_to_video'],
  description: 'Procedural',
};

let dir: string;
let keychain: ReturnType<typeof memoryKeychain>;
let engine: ReturnType<typeof engineControls>;
let manager: ProviderManager;
let events: AppEvent[];
let records: ProviderRecord[];
let local: boolean;
/** The handler's one dependency for "Refresh models": the engine's syncCatalog, and what it was asked. */
let syncCalls: Array<{ providers?: SyncedProvider[] } | undefined>;
let syncAnswer: () => Promise<CatalogSyncReport>;

function client(): IpcClient {
  const bus = new EventBus();
  bus.on((e) => events.push(e));
  const session = { api: { listProviders: () => Promise.resolve({ total: records.length, providers: records }) } };
  const router = createIpcRouter(
    stubHandlers({
      providers: providersHandlers({
        manager,
        session: () => Promise.resolve(session as unknown as ServiceSession),
        activeIsLocal: () => Promise.resolve(local),
        startEngine: () => Promise.resolve(),
        catalogSync: () =>
          Promise.resolve({
            syncCatalog: (options?: { providers?: SyncedProvider[] }) => {
              syncCalls.push(options);
              return syncAnswer();
            },
          }),
        bus,
      }),
    }),
  );
  const handler = new RPCHandler(router, rpcHandlerOptions('/rpc'));
  return createORPCClient(
    new RPCLink({
      url: 'http://main.test/rpc',
      fetch: async (request) =>
        (await handler.handle(request, { prefix: '/rpc', context: { transport: 'http' } })).response ??
        new Response('no route', { status: 404 }),
    }),
  );
}

function setUp(available = true): IpcClient {
  keychain = memoryKeychain(available);
  engine = engineControls();
  const store = createConfSettingsStore(dir);
  manager = createProviderManager({
    keys: createProviderKeyStore(keychain, path.join(dir, 'engine')),
    settings: createProviderSettings(store),
    logger: createLogger({ write: () => undefined }, 'silent'),
  });
  void manager.attach(engine);
  return client();
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-providers-'));
  events = [];
  records = [builtIn];
  local = true;
  syncCalls = [];
  syncAnswer = () => Promise.reject(new Error('syncCatalog not expected'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'fal-test-key-0a1b2c3d4e5f';

async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = (await call.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e,
  )) as { code: string; message: string };
  return error;
}

describe('providers.* input checks', () => {
  it.each([
    ['a space', 'fal-test key-0a1b2c3d'],
    ['a trailing newline', `${KEY}\n`],
    ['a line break inside', 'fal-test-key\r\n0a1b2c3d'],
    ['a tab', `\t${KEY}`],
  ])('refuses a key with %s, stores nothing and tells the engine nothing', async (_what, key) => {
    const ipc = setUp();
    const error = await refusal(ipc.providers.setKey({ id: 'fal', key }));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toMatch(/space or a line break/);
    expect(error.message).not.toContain(key.trim());
    expect(keychain.entries.size).toBe(0);
    expect(engine.calls).toEqual([]);
    expect(events).toEqual([]);
  });

  it.each([
    ['too short', 'abc123', /too short/],
    ['too long', 'k'.repeat(4097), /too long/],
    ['not printable ASCII', 'clé-secrète-1234', /characters no API key has/],
  ])('refuses a key that is %s', async (_what, key, message) => {
    const ipc = setUp();
    const error = await refusal(ipc.providers.setKey({ id: 'fal', key }));
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(message) });
    expect(keychain.entries.size).toBe(0);
  });

  it.each(['sora', 'FAL', '__proto__', 'constructor', '', 'prov_local_waves'])(
    'refuses the unknown provider id %j on every route',
    async (id) => {
      const ipc = setUp();
      const calls = [
        ipc.providers.setKey({ id: id as 'fal', key: KEY }),
        ipc.providers.removeKey({ id: id as 'fal' }),
        ipc.providers.testKey({ id: id as 'fal' }),
        ipc.providers.setEnabled({ id: id as 'fal', enabled: false }),
        ipc.providers.setBaseUrl({ id: id as 'fal', baseUrl: 'https://proxy.test' }),
      ];
      for (const call of calls) expect((await refusal(call)).code).toBe('invalid_input');
      expect(engine.calls).toEqual([]);
    },
  );

  it.each([
    ['ftp://files.example/fal', /http:\/\/ or https:\/\//],
    ['javascript:alert(1)', /http:\/\/ or https:\/\//],
    ['file:///etc/passwd', /http:\/\/ or https:\/\//],
    ['fal.example', /Not a URL/],
    ['https://user:pass@proxy.example', /user name or password/],
    ['https://proxy.example/?key=1', /query/],
    ['', /./],
  ])('refuses the base URL %j', async (baseUrl, message) => {
    const ipc = setUp();
    const error = await refusal(ipc.providers.setBaseUrl({ id: 'fal', baseUrl }));
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(message) });
    expect(engine.calls).toEqual([]);
  });
});

describe('providers.* on the Local engine', () => {
  it('stores a key in the keychain, applies it live and lists only configured + last4', async () => {
    const ipc = setUp();
    const before = await ipc.providers.list();
    expect(before.keysHeldBy).toBe('app');
    expect(before.providers.map((p) => p.id)).toEqual([
      'fal',
      'replicate',
      'google',
      'runway',
      'luma',
      'openai',
      'prov_local_waves',
    ]);
    expect(before.providers.find((p) => p.id === 'fal')).toMatchObject({ configured: false, last4: null });

    const after = await ipc.providers.setKey({ id: 'fal', key: KEY });
    const fal = after.providers.find((p) => p.id === 'fal')!;
    expect(fal).toMatchObject({
      kind: 'remote',
      name: 'fal',
      configured: true,
      last4: '4e5f',
      keySource: 'keychain',
      enabled: true,
      baseUrl: null,
      models: ['kling/v2.1', 'veo/3'],
      health: { status: 'unhealthy', lastError: 'auth', message: 'fal refused the key', since: 'T0' },
    });
    expect(after.providers.find((p) => p.id === 'replicate')).toMatchObject({ configured: false, kind: 'remote' });
    expect(after.providers.find((p) => p.id === 'prov_local_waves')).toMatchObject({
      kind: 'local',
      configured: true,
      health: { status: 'ok' },
    });
    expect(JSON.stringify(after)).not.toContain(KEY);
    expect([...keychain.entries.values()]).toEqual([KEY]);
    expect([...keychain.entries.keys()][0]).toMatch(/^provider:fal:[0-9a-f]{16}$/);
    expect(engine.calls).toEqual([['setProviderKey', 'fal', KEY]]);
    expect(events).toEqual([{ type: 'providers.changed' }]);
    // Nothing of the key in the settings file.
    expect(await readFile(path.join(dir, 'settings.json'), 'utf8').catch(() => '')).not.toContain(KEY);

    const removed = await ipc.providers.removeKey({ id: 'fal' });
    expect(removed.providers.find((p) => p.id === 'fal')).toMatchObject({ configured: false, last4: null });
    expect(keychain.entries.size).toBe(0);
    expect(engine.calls.at(-1)).toEqual(['setProviderKey', 'fal', null]);
  });

  it("names where the engine's own key comes from when the app stored none", () => {
    const status = { configured: true, envKey: 'FAL_KEY' } as EngineProviderStatus;
    expect(engineKeySource({ ...status, keySource: 'env' })).toBe('environment (FAL_KEY)');
    expect(engineKeySource({ ...status, keySource: 'file' })).toBe('file (provider-keys.json)');
    expect(engineKeySource({ ...status, configured: false })).toBeNull();
    expect(storedKeySource('file')).toBe('key file');
    expect(storedKeySource('secret-service')).toBe('keychain');
  });

  it('switches a provider off and on, and sets and clears its base URL, in the settings file and live', async () => {
    const ipc = setUp();
    const off = await ipc.providers.setEnabled({ id: 'luma', enabled: false });
    expect(off.providers.find((p) => p.id === 'luma')!.enabled).toBe(false);
    const url = await ipc.providers.setBaseUrl({ id: 'fal', baseUrl: ' http://127.0.0.1:9000/ ' });
    expect(url.providers.find((p) => p.id === 'fal')!.baseUrl).toBe('http://127.0.0.1:9000');
    const file = JSON.parse(await readFile(path.join(dir, 'settings.json'), 'utf8')) as Record<string, unknown>;
    expect(file['providers']).toEqual({ disabled: ['luma'], baseUrls: { fal: 'http://127.0.0.1:9000' } });

    // What the engine is started with next time is what was stored.
    expect(await manager.startOptions(['fal', 'luma'])).toEqual({
      providerKeys: {},
      providerBaseUrls: { fal: 'http://127.0.0.1:9000' },
      disabledProviders: ['luma'],
    });

    await ipc.providers.setEnabled({ id: 'luma', enabled: true });
    const cleared = await ipc.providers.setBaseUrl({ id: 'fal', baseUrl: null });
    expect(cleared.providers.find((p) => p.id === 'fal')!.baseUrl).toBeNull();
    expect(cleared.providers.find((p) => p.id === 'luma')!.enabled).toBe(true);
    expect(engine.calls).toEqual([
      ['setProviderEnabled', 'luma', false],
      ['setProviderBaseUrl', 'fal', 'http://127.0.0.1:9000'],
      ['setProviderEnabled', 'luma', true],
      ['setProviderBaseUrl', 'fal', null],
    ]);
    expect(events).toHaveLength(4);
  });

  it('starts the engine with the stored keys', async () => {
    const ipc = setUp();
    await ipc.providers.setKey({ id: 'fal', key: KEY });
    await ipc.providers.setKey({ id: 'openai', key: 'sk-proj-abcdefgh12345678' });
    expect((await manager.startOptions(['fal', 'replicate', 'openai'])).providerKeys).toEqual({
      fal: KEY,
      openai: 'sk-proj-abcdefgh12345678',
    });
  });

  it('applies a change made while the engine was starting once it is attached, and nothing otherwise', async () => {
    const ipc = setUp();
    await manager.attach(null);
    await manager.startOptions(['fal', 'luma']);
    await manager.attach(engine);
    expect(engine.calls).toEqual([]); // started with the latest state: nothing to replay

    await manager.attach(null);
    await manager.startOptions(['fal', 'luma']); // the engine starts with what is stored now …
    await ipc.providers.setKey({ id: 'fal', key: KEY }); // … and the user saves a key meanwhile
    await ipc.providers.setEnabled({ id: 'luma', enabled: false });
    expect(engine.calls).toEqual([]);
    await manager.attach(engine);
    expect(engine.calls).toEqual([
      ['setProviderKey', 'fal', KEY],
      ['setProviderEnabled', 'fal', true],
      ['setProviderBaseUrl', 'fal', null],
      ['setProviderKey', 'luma', null],
      ['setProviderEnabled', 'luma', false],
      ['setProviderBaseUrl', 'luma', null],
    ]);
  });

  it('tests a key and says plainly whether it works', async () => {
    const ipc = setUp();
    expect(await ipc.providers.testKey({ id: 'fal' })).toEqual({
      ok: false,
      message: 'No key is stored for fal. Paste one first.',
    });
    expect(engine.calls).toEqual([]); // nothing to test: no call to the provider
    await ipc.providers.setKey({ id: 'fal', key: KEY });
    expect(await ipc.providers.testKey({ id: 'fal' })).toEqual({ ok: true, message: 'fal accepted the key.' });
    engine.keyWorks = false;
    expect(await ipc.providers.testKey({ id: 'fal' })).toEqual({
      ok: false,
      message: 'fal refused the key (401 Unauthorized).',
    });
  });

  it('answers not_available for a key test when the engine has no provider controls', async () => {
    const ipc = setUp();
    await ipc.providers.setKey({ id: 'fal', key: KEY });
    await manager.attach(null);
    expect((await refusal(ipc.providers.testKey({ id: 'fal' }))).code).toBe('not_available');
  });

  it('answers keychain_unavailable when no keychain can keep the key', async () => {
    const ipc = setUp(false);
    const error = await refusal(ipc.providers.setKey({ id: 'fal', key: KEY }));
    expect(error).toMatchObject({ code: 'keychain_unavailable', message: expect.stringMatching(/No OS keychain/) });
    expect(error.message).not.toContain(KEY);
    expect(engine.calls).toEqual([]);
    expect((await ipc.providers.list()).providers.find((p) => p.id === 'fal')!.configured).toBe(false);
  });
});

describe('providers.list with a remote profile', () => {
  it("is that service's /providers, read-only: configured and health from its records, no last4", async () => {
    const ipc = setUp();
    local = false;
    records = [
      {
        id: 'replicate',
        slug: 'replicate',
        name: 'Replicate',
        status: 'unhealthy',
        models: ['google/veo-3'],
        features: ['text_to_video'],
        configured: true,
        lastError: { class: 'rate_limited', message: 'Replicate answered 429', at: '2026-11-23T14:05:00Z' },
        since: '2026-11-23T14:00:00Z',
      },
      { ...builtIn, status: 'ok' },
    ];
    const list = await ipc.providers.list();
    expect(list.keysHeldBy).toBe('operator');
    expect(list.providers).toEqual([
      expect.objectContaining({
        id: 'replicate',
        kind: 'remote',
        configured: true,
        last4: null,
        baseUrl: null,
        health: {
          status: 'unhealthy',
          lastError: 'rate_limited',
          message: 'Replicate answered 429',
          since: '2026-11-23T14:00:00Z',
        },
      }),
      expect.objectContaining({
        id: 'prov_local_waves',
        kind: 'local',
        configured: true,
        health: expect.objectContaining({ status: 'ok' }),
      }),
    ]);
  });
});

describe('providers.refreshModels', () => {
  const report = PARTIAL_SYNC_REPORT;

  it("syncs the Local engine's catalog, answers its report and has the models reloaded", async () => {
    const ipc = setUp();
    syncAnswer = () => Promise.resolve(report);
    expect(await ipc.providers.refreshModels()).toEqual(report);
    expect(await ipc.providers.refreshModels({ providers: ['fal'] })).toEqual(report);
    expect(syncCalls).toEqual([undefined, { providers: ['fal'] }]);
    expect(events.filter((e) => e.type === 'providers.changed')).toHaveLength(2);
  });

  it('refuses a provider without a listing, and a remote profile, before anything is synced', async () => {
    const ipc = setUp();
    await expect(ipc.providers.refreshModels({ providers: ['runway' as SyncedProvider] })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    local = false;
    await expect(ipc.providers.refreshModels()).rejects.toMatchObject({
      code: 'not_available',
      message: 'This service keeps its own model list; refresh it there',
    });
    expect(syncCalls).toEqual([]);
  });

  it("says the engine's error when the sync itself fails, and announces nothing", async () => {
    const ipc = setUp();
    syncAnswer = () => Promise.reject(new Error('this Local engine cannot sync its catalog'));
    await expect(ipc.providers.refreshModels()).rejects.toMatchObject({
      message: 'this Local engine cannot sync its catalog',
    });
    expect(events.filter((e) => e.type === 'providers.changed')).toHaveLength(0);
  });
});
