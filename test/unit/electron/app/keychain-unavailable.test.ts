import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, ORPCError, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/composition-root.ts';
import { browserPlatform } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import { SecretStoreUnavailableError, type SecretStore } from '../../../../electron/core/secrets/index.ts';

// A defect found when the app was tried as a new user: with no OS keychain, saving a key answered 500 internal_error.
// The keychain backend here reports what createSecretStore reports when no Secret Service runs.
const MESSAGE = 'No OS keychain is available: no Secret Service (GNOME Keyring or KWallet) is running in this session.';
const noKeychain: SecretStore = {
  status: () =>
    Promise.resolve({
      backend: 'none',
      available: false,
      message: MESSAGE,
      detail: 'Platform failure: DBus error: org.freedesktop.DBus.Error.ServiceUnknown',
    }),
  get: () => Promise.resolve(null),
  set: () => Promise.reject(new SecretStoreUnavailableError(MESSAGE)),
  delete: () => Promise.resolve(false),
  info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'none' }),
};

let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-nokeychain-'));
  app = createApp({
    dataDir: dir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: noKeychain,
    background: false,
  });
  ipc = createRouterClient(app.router, { context: { transport: 'http' } });
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('saving a key with no OS keychain', () => {
  it('answers keychain_unavailable (503) with the reason, not internal_error', async () => {
    const profile = await ipc.profiles.create({ name: 'Remote', baseUrl: 'https://api.example.test/v1' });
    const error: unknown = await ipc.profiles.setKey({ id: profile.id, key: 'sk-test-1234' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ORPCError);
    expect(error).toMatchObject({ code: 'keychain_unavailable', status: 503, message: MESSAGE });
    // Creating a profile with a key fails the same way, and leaves no profile behind.
    const withKey: unknown = await ipc.profiles
      .create({ name: 'Remote 2', baseUrl: 'https://api.example.test/v1', key: 'sk-test-5678' })
      .catch((e: unknown) => e);
    expect(withKey).toMatchObject({ code: 'keychain_unavailable', status: 503 });
    expect((await ipc.profiles.list()).profiles.map((p) => p.name)).toEqual(['Local engine', 'Remote']);
  });

  it('reports the key status without the native error text', async () => {
    const { profiles } = await ipc.profiles.list();
    for (const p of profiles) {
      // The Local engine needs no key: no keychain message at all (docs/security.md).
      expect(p.key).toEqual(
        p.kind === 'local'
          ? { hasKey: false, last4: null, backend: 'none' }
          : { hasKey: false, last4: null, backend: 'none', message: MESSAGE },
      );
      expect(JSON.stringify(p)).not.toMatch(/DBus/);
    }
  });
});
