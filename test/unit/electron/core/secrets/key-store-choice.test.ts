import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_STORE_CHOICE_FILE, keyStoreChoice } from '../../../../../electron/core/secrets/choice.ts';

// The key store a person chose is remembered for their data folder, until they choose another
// (docs/security.md, "Keys without an OS keychain").
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-keystore-choice-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the key store chosen', () => {
  it('is remembered for the data folder once chosen with --key-store, until --key-store keychain', () => {
    const data = join(dir, 'flag');
    expect(keyStoreChoice({ env: {}, userDataDir: data })).toMatchObject({ store: 'keychain', source: 'default' });
    expect(keyStoreChoice({ flag: 'file', env: {}, userDataDir: data })).toMatchObject({
      store: 'file',
      source: 'flag',
      keyFile: { file: join(data, 'keys.json'), passphrase: null },
    });
    // A later run without the flag keeps the key file, and takes the passphrase from its own environment.
    expect(keyStoreChoice({ env: { CLIPDESK_KEY_PASSPHRASE: 'p' }, userDataDir: data })).toMatchObject({
      store: 'file',
      source: 'remembered',
      keyFile: { file: join(data, 'keys.json'), passphrase: 'p' },
    });
    // Another data folder is another choice.
    expect(keyStoreChoice({ env: {}, userDataDir: join(dir, 'other') })).toMatchObject({ store: 'keychain' });

    expect(keyStoreChoice({ flag: 'keychain', env: {}, userDataDir: data })).toMatchObject({ store: 'keychain' });
    expect(keyStoreChoice({ env: {}, userDataDir: data })).toMatchObject({ store: 'keychain', source: 'remembered' });
  });

  it('CLIPDESK_KEY_STORE is a choice as the flag is, and the flag wins over it', async () => {
    const data = join(dir, 'env');
    expect(keyStoreChoice({ env: { CLIPDESK_KEY_STORE: 'file' }, userDataDir: data })).toMatchObject({
      store: 'file',
      source: 'env',
    });
    expect((await stat(join(data, KEY_STORE_CHOICE_FILE))).mode & 0o777).toBe(0o600);
    expect(keyStoreChoice({ env: {}, userDataDir: data })).toMatchObject({ store: 'file', source: 'remembered' });
    expect(keyStoreChoice({ flag: 'keychain', env: { CLIPDESK_KEY_STORE: 'file' }, userDataDir: data })).toMatchObject({
      store: 'keychain',
      source: 'flag',
    });
    expect(keyStoreChoice({ env: {}, userDataDir: data })).toMatchObject({ store: 'keychain' });
  });

  it('a store that is not one is refused and remembers nothing', () => {
    const data = join(dir, 'bad');
    expect(() => keyStoreChoice({ flag: 'basic', env: {}, userDataDir: data })).toThrow(
      "--key-store (CLIPDESK_KEY_STORE) is keychain or file, not 'basic'",
    );
    expect(keyStoreChoice({ env: {}, userDataDir: data })).toMatchObject({ store: 'keychain', source: 'default' });
  });
});
