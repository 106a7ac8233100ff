import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProfiles } from '../../../../../electron/core/profiles/index.ts';
import { createKeyFile, createSecretStore } from '../../../../../electron/core/secrets/index.ts';
import {
  defaultSettingsFile,
  type SettingsFile,
  type SettingsStore,
} from '../../../../../electron/core/settings/index.ts';

// The opt-in key file (docs/security.md, "Keys without an OS keychain"): sealed with a passphrase,
// plain without one, never a mix, and never opened or extended with the wrong passphrase.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-keyfile-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const KEY = 'sk-live-0123456789abcdef';

function memoryStore(): SettingsStore {
  const data: SettingsFile = defaultSettingsFile();
  return { path: '(memory)', get: (key) => data[key], set: (key, value) => void (data[key] = value) };
}

describe('the key file', () => {
  it('seals with the passphrase, opens only with it, and seals keys kept plainly before', async () => {
    const file = join(dir, 'sealed.json');
    await createKeyFile({ file, passphrase: null }).set('profile:a', KEY);
    expect(JSON.parse(await readFile(file, 'utf8')).keys['profile:a']).toBe(KEY);

    const sealed = createKeyFile({ file, passphrase: 'pass one' });
    await sealed.set('provider:fal:x', 'fal-key-abcdefgh');
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('fal-key-abcdefgh');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await createKeyFile({ file, passphrase: 'pass one' }).get('profile:a')).toBe(KEY);

    await expect(createKeyFile({ file, passphrase: 'pass two' }).get('profile:a')).rejects.toThrow(
      /passphrase does not open/,
    );
    await expect(createKeyFile({ file, passphrase: null }).get('profile:a')).rejects.toThrow(
      /the passphrase is missing, and the keys in .* are encrypted\. Set CLIPDESK_KEY_PASSPHRASE/,
    );
    // Neither a wrong passphrase nor none adds a key beside ones it cannot open.
    await expect(createKeyFile({ file, passphrase: 'pass two' }).set('profile:b', KEY)).rejects.toThrow();
    await expect(createKeyFile({ file, passphrase: null }).set('profile:b', KEY)).rejects.toThrow();
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('as the secret store, says when the passphrase is missing or does not open the file, as the file is when asked', async () => {
    const file = join(dir, 'asked.json');
    // Made before any key is sealed: the status is the file's now, not when the store was made.
    const none = createSecretStore({ keyFile: { file, passphrase: null } });
    const wrong = createSecretStore({ keyFile: { file, passphrase: 'not it' } });
    expect(await none.status()).toMatchObject({ backend: 'file', available: true });
    expect(await wrong.status()).toMatchObject({ backend: 'file', available: true });

    await createKeyFile({ file, passphrase: 'the passphrase' }).set('provider:fal:x', 'fal-key-abcdefgh');
    const missing = await none.status();
    expect(missing).toMatchObject({ backend: 'file', available: false });
    expect(missing.message).toContain('the passphrase is missing');
    expect(missing.message).toContain('Set CLIPDESK_KEY_PASSPHRASE');
    expect(missing.message).not.toContain('plain text');
    const refused = await wrong.status();
    expect(refused).toMatchObject({ backend: 'file', available: false });
    expect(refused.message).toContain('the passphrase does not open the key file');
    expect(refused.message).toContain('Set CLIPDESK_KEY_PASSPHRASE');
    expect(await createSecretStore({ keyFile: { file, passphrase: 'the passphrase' } }).status()).toMatchObject({
      available: true,
    });
  });

  it('a sealed key moved to another account does not open', async () => {
    const file = join(dir, 'moved.json');
    await createKeyFile({ file, passphrase: 'p' }).set('profile:a', KEY);
    const shape = JSON.parse(await readFile(file, 'utf8'));
    shape.keys['profile:b'] = shape.keys['profile:a'];
    await writeFile(file, JSON.stringify(shape));
    await expect(createKeyFile({ file, passphrase: 'p' }).get('profile:b')).rejects.toThrow(/does not open/);
  });

  it('as the secret store, its status says how it protects keys, and a remote profile shows it', async () => {
    const plain = createSecretStore({ keyFile: { file: join(dir, 'plain.json'), passphrase: null } });
    expect(await plain.status()).toMatchObject({ backend: 'file', available: true });
    expect((await plain.status()).message).toMatch(/^Warning: API keys are kept in plain text/);

    const store = memoryStore();
    const profiles = createProfiles({ store, secrets: plain });
    const remote = await profiles.create({ name: 'Remote', baseUrl: 'https://api.example.test/v1', key: KEY });
    expect(remote.key).toMatchObject({ hasKey: true, last4: 'cdef', backend: 'file' });
    expect(remote.key.message).toMatch(/plain text/);
  });

  it('CLIPDESK_API_KEY is a remote profile’s key, over a stored one, and Settings says so', async () => {
    const secrets = createSecretStore({ keyFile: { file: join(dir, 'env.json'), passphrase: null } });
    const store = memoryStore();
    const profiles = createProfiles({ store, secrets, envKey: 'cdsk_from_env_9876' });
    const remote = await profiles.create({ name: 'Remote', baseUrl: 'https://api.example.test/v1', key: KEY });
    expect(await profiles.getKey(remote.id)).toBe('cdsk_from_env_9876');
    expect(remote.key).toMatchObject({ hasKey: true, last4: '9876', backend: 'env' });
    expect(remote.key.message).toContain('CLIPDESK_API_KEY');
  });
});
