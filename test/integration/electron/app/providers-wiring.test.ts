import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/composition-root.ts';
import { browserPlatform } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import type { AppEvent } from '../../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';

// The composition root with the real Local engine: Settings → Providers lists the engine's own
// providers beside the AI ones, and what is stored survives a restart of the app. The OS keychain
// is a Map here (its real behaviour is tested in core/providers/key-store.test.ts).
const keychain = memoryKeychain();

let dir: string;
const open: App[] = [];
function start(): { app: App; ipc: RouterClient<IpcRouter> } {
  const app = createApp({
    dataDir: dir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: keychain,
    background: false,
  });
  open.push(app);
  return { app, ipc: createRouterClient(app.router, { context: { transport: 'http' } }) };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-providers-app-'));
});
afterAll(async () => {
  for (const app of open) await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('Settings → Providers on the Local engine', () => {
  it('lists the AI providers and the built-in ones, and keeps keys and settings across a restart', async () => {
    const first = start();
    const events: AppEvent[] = [];
    first.app.bus.on((e) => events.push(e));
    const before = await first.ipc.providers.list();
    expect(before.keysHeldBy).toBe('app');
    const ids = before.providers.map((p) => p.id);
    expect(ids.slice(0, 6)).toEqual(['fal', 'replicate', 'google', 'runway', 'luma', 'openai']);
    const builtIn = before.providers.filter((p) => p.kind === 'local');
    expect(builtIn.length).toBeGreaterThan(0);
    for (const p of builtIn) expect(p).toMatchObject({ configured: true, last4: null, health: { status: 'ok' } });
    expect(before.providers.filter((p) => p.kind === 'remote').every((p) => !p.configured)).toBe(true);

    await first.ipc.providers.setKey({ id: 'replicate', key: 'r8_abcdefghijklmnop1234' });
    await first.ipc.providers.setBaseUrl({ id: 'replicate', baseUrl: 'http://127.0.0.1:9000' });
    await first.ipc.providers.setEnabled({ id: 'google', enabled: false });
    expect(events.filter((e) => e.type === 'providers.changed')).toHaveLength(3);
    await first.app.dispose();
    open.length = 0;

    const second = start();
    const after = await second.ipc.providers.list();
    expect(after.providers.find((p) => p.id === 'replicate')).toMatchObject({
      configured: true,
      last4: '1234',
      baseUrl: 'http://127.0.0.1:9000',
      enabled: true,
    });
    expect(after.providers.find((p) => p.id === 'google')).toMatchObject({ enabled: false, configured: false });
    expect(JSON.stringify(after)).not.toContain('r8_abcdefghijklmnop1234');
  });
});

describe('Settings → Providers without an OS keychain (npm start -- --key-store file)', () => {
  it('stores keys in the encrypted key file, takes FAL_KEY from the environment, and says where each comes from', async () => {
    const dataDir = path.join(dir, 'key-file-app'); // removed with dir
    const env = { CLIPDESK_KEY_PASSPHRASE: 'a passphrase', FAL_KEY: 'fal-env-key-abcd:5678' };
    const app = createApp({
      dataDir,
      platform: browserPlatform,
      version: '0',
      mediaUrlPrefix: '/local-media/',
      keyStore: 'file',
      env,
      background: false,
    });
    open.push(app);
    const ipc = createRouterClient(app.router, { context: { transport: 'http' } });
    const listed = await ipc.providers.setKey({ id: 'replicate', key: 'r8_keyfile_key_9999' });
    expect(listed.providers.find((p) => p.id === 'replicate')).toMatchObject({
      configured: true,
      last4: '9999',
      keySource: 'key file',
    });
    expect(listed.providers.find((p) => p.id === 'fal')).toMatchObject({
      configured: true,
      last4: '5678',
      keySource: 'environment (FAL_KEY)',
    });
    // Settings says where keys go, and how they are protected.
    expect(listed.keyStore).toMatch(/keys\.json \(owner-only\), encrypted with your passphrase/);
    const file = await readFile(path.join(dataDir, 'keys.json'), 'utf8');
    expect(file).not.toContain('r8_keyfile_key_9999');
    expect(JSON.stringify(listed)).not.toContain(env.FAL_KEY);
    await app.dispose();
    open.splice(open.indexOf(app), 1);

    // The next start remembers the key file without the switch; a wrong passphrase is said, not "No key".
    const again = createApp({
      dataDir,
      platform: browserPlatform,
      version: '0',
      mediaUrlPrefix: '/local-media/',
      env: { CLIPDESK_KEY_PASSPHRASE: 'not the passphrase' },
      background: false,
    });
    open.push(again);
    const locked = await createRouterClient(again.router, { context: { transport: 'http' } }).providers.list();
    expect(locked.keyStoreAvailable).toBe(false);
    expect(locked.keyStore).toContain('the passphrase does not open the key file');
    expect(locked.keyStore).toContain('Set CLIPDESK_KEY_PASSPHRASE');
  });
});
