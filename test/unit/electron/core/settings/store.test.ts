import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProfiles } from '../../../../../electron/core/profiles/index.ts';
import type { SecretStore } from '../../../../../electron/core/secrets/index.ts';
import {
  createConfSettingsStore,
  defaultSettingsFile,
  type SettingsFile,
  type SettingsStore,
} from '../../../../../electron/core/settings/index.ts';

const secrets: SecretStore = {
  status: () => Promise.resolve({ backend: 'none', available: false, message: 'none' }),
  get: () => Promise.resolve(null),
  set: () => Promise.reject(new Error('unused')),
  delete: () => Promise.resolve(false),
  info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'none' }),
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-settings-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the settings store behind the core', () => {
  it('conf (CLI, browser mode): settings.json in the folder, shared by every reader of it', async () => {
    const store = createConfSettingsStore(dir);
    expect(store.path).toBe(path.join(dir, 'settings.json'));
    const app = createProfiles({ store, secrets });
    app.updateSettings({ theme: 'dark', retentionWarnDays: 5 });
    const remote = await app.create({ name: 'Remote', baseUrl: 'https://api.example.test/v1/' });
    await app.activate(remote.id);

    // Another process (the CLI beside the app) reads the same file through its own store.
    const cli = createProfiles({ dir, secrets });
    expect(cli.settings()).toMatchObject({ theme: 'dark', retentionWarnDays: 5 });
    expect(cli.activeId()).toBe(remote.id);
    expect((await cli.list()).profiles.map((p) => p.baseUrl)).toEqual(['', 'https://api.example.test/v1']);

    const file = JSON.parse(await readFile(store.path, 'utf8')) as SettingsFile;
    expect(Object.keys(file).sort()).toEqual(['activeId', 'profiles', 'settings']);
    expect(JSON.stringify(file)).not.toMatch(/key/i);
  });

  it('the core needs nothing but the interface (electron-store is injected the same way)', async () => {
    const data: SettingsFile = defaultSettingsFile();
    const writes: string[] = [];
    const memory: SettingsStore = {
      path: '(memory)',
      get: (key) => data[key],
      set: (key, value) => {
        writes.push(key);
        data[key] = value;
      },
    };
    const profiles = createProfiles({ store: memory, secrets });
    expect(profiles.settings()).toEqual(data.settings);
    profiles.updateSettings({ notifications: false });
    await profiles.create({ name: 'R', baseUrl: 'https://r.test/v1' });
    expect(writes).toEqual(['settings', 'profiles']);
    expect(data.settings.notifications).toBe(false);
    expect((await profiles.list()).profiles).toHaveLength(2);
  });
});
