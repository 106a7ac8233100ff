import { describe, expect, it } from 'vitest';
import { createProfiles, LOCAL_PROFILE_ID } from '../../../../../electron/core/profiles/index.ts';
import type { SecretStore } from '../../../../../electron/core/secrets/index.ts';
import {
  defaultSettingsFile,
  type SettingsFile,
  type SettingsStore,
} from '../../../../../electron/core/settings/index.ts';

/** A machine without a Secret Service: every keychain call is counted. */
function noKeychain(): SecretStore & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    status: () => {
      calls.push('status');
      return Promise.resolve({
        backend: 'none',
        available: false,
        message:
          'No OS keychain is available: no Secret Service (GNOME Keyring or KWallet) is running in this session.',
      });
    },
    get: (account) => {
      calls.push(`get ${account}`);
      return Promise.resolve(null);
    },
    set: () => Promise.reject(new Error('no keychain')),
    delete: () => Promise.resolve(false),
    info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'none' }),
  };
}

function memoryStore(): SettingsStore {
  const data: SettingsFile = defaultSettingsFile();
  return { path: '(memory)', get: (key) => data[key], set: (key, value) => void (data[key] = value) };
}

describe('the Local engine profile needs no key', () => {
  it('its key status asks no keychain and carries no keychain message; a remote profile’s does', async () => {
    const secrets = noKeychain();
    const profiles = createProfiles({ store: memoryStore(), secrets });
    const local = await profiles.get(LOCAL_PROFILE_ID);
    expect(local.kind).toBe('local');
    expect(local.key).toEqual({ hasKey: false, last4: null, backend: 'none' });
    expect(secrets.calls).toEqual([]);

    const remote = await profiles.create({ name: 'Remote', baseUrl: 'https://api.example.test/v1' });
    expect(remote.key.message).toMatch(/No OS keychain is available/);
  });

  it('a key cannot be stored for it', async () => {
    const profiles = createProfiles({ store: memoryStore(), secrets: noKeychain() });
    await expect(profiles.setKey(LOCAL_PROFILE_ID, 'sk-abc')).rejects.toThrow('The Local engine needs no API key');
  });
});
