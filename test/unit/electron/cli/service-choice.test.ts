// Which service a `clipdesk` command uses: --base-url > CLIPDESK_BASE_URL > the current profile,
// the app's active one (docs/cli.md "Which service").
import { describe, expect, it } from 'vitest';
import { chooseService, mcpProfileFromEnv } from '../../../../electron/cli/service-choice.ts';
import { mcpClientConfig } from '../../../../electron/cli/mcp.ts';
import { profileLines } from '../../../../electron/cli/profiles.ts';
import { createProfiles, LOCAL_PROFILE_ID } from '../../../../electron/core/profiles/index.ts';
import type { SecretStore } from '../../../../electron/core/secrets/index.ts';
import {
  defaultSettingsFile,
  type SettingsFile,
  type SettingsStore,
} from '../../../../electron/core/settings/index.ts';

function memorySecrets(): SecretStore {
  const keys = new Map<string, string>();
  return {
    status: () => Promise.resolve({ backend: 'file', available: true, message: 'kept in the key file' }),
    get: (account) => Promise.resolve(keys.get(account) ?? null),
    set: (account, key) => Promise.resolve(void keys.set(account, key)),
    delete: (account) => Promise.resolve(keys.delete(account)),
    info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'file' }),
  };
}

function memoryStore(): SettingsStore {
  const data: SettingsFile = defaultSettingsFile();
  return { path: '(memory)', get: (key) => data[key], set: (key, value) => void (data[key] = value) };
}

async function withRemote() {
  const profiles = createProfiles({ store: memoryStore(), secrets: memorySecrets() });
  const remote = await profiles.create({
    name: 'studio',
    baseUrl: 'https://api.example.com/v1/',
    key: 'cdsk_abcd1234',
  });
  return { profiles, remote };
}

describe('chooseService', () => {
  it('the current profile: the Local engine at first, the remote one once it is active', async () => {
    const { profiles, remote } = await withRemote();
    expect(await chooseService(profiles, undefined, {})).toEqual({
      kind: 'local',
      profileId: LOCAL_PROFILE_ID,
      from: 'profile',
    });
    await profiles.activate(remote.id);
    expect(await chooseService(profiles, undefined, {})).toEqual({
      kind: 'remote',
      baseUrl: 'https://api.example.com/v1',
      profileId: remote.id,
      from: 'profile',
    });
  });

  it('--base-url wins over CLIPDESK_BASE_URL, which wins over the current profile', async () => {
    const { profiles, remote } = await withRemote();
    await profiles.activate(remote.id);
    const env = { CLIPDESK_BASE_URL: 'http://127.0.0.1:9000/v1' };
    expect(await chooseService(profiles, undefined, env)).toEqual({
      kind: 'remote',
      baseUrl: 'http://127.0.0.1:9000/v1',
      profileId: null,
      from: 'CLIPDESK_BASE_URL',
    });
    // The flag names the stored profile's URL: its key is the one used.
    expect(await chooseService(profiles, 'https://api.example.com/v1', env)).toMatchObject({
      baseUrl: 'https://api.example.com/v1',
      profileId: remote.id,
      from: '--base-url',
    });
  });

  it('a CLIPDESK_BASE_URL that is not an http(s) URL is a usage error naming the variable', async () => {
    const { profiles } = await withRemote();
    await expect(chooseService(profiles, undefined, { CLIPDESK_BASE_URL: 'ftp://x' })).rejects.toThrow(
      /^CLIPDESK_BASE_URL must be an http\(s\) URL: ftp:\/\/x$/,
    );
  });

  it('profiles list stars the current profile and never shows a key but its last 4', async () => {
    const { profiles, remote } = await withRemote();
    await profiles.activate(remote.id);
    expect(profileLines(await profiles.list())).toEqual([
      '  Local engine\tlocal\tbuilt-in\tneeds no key',
      '* studio\tremote\thttps://api.example.com/v1\tkey …1234',
    ]);
  });
});

describe('clipdesk mcp without --profile', () => {
  it("CLIPDESK_BASE_URL picks that service's profile; a URL no profile has is refused with the fix", async () => {
    const { profiles, remote } = await withRemote();
    expect(await mcpProfileFromEnv(profiles, {})).toBeNull();
    expect(await mcpProfileFromEnv(profiles, { CLIPDESK_BASE_URL: 'https://api.example.com/v1' })).toBe(remote.id);
    await expect(mcpProfileFromEnv(profiles, { CLIPDESK_BASE_URL: 'http://127.0.0.1:9/v1' })).rejects.toThrow(
      'run clipdesk login --base-url http://127.0.0.1:9/v1 first, or unset it',
    );
  });
});

describe('clipdesk mcp --print-config', () => {
  const paths = { node: '/opt/node/bin/node', bin: '/home/ann/clipdesk/bin/clipdesk.js' };

  it('claude and cursor: mcpServers with absolute paths; vscode: servers of type stdio', () => {
    const server = {
      command: '/opt/node/bin/node',
      args: ['/home/ann/clipdesk/bin/clipdesk.js', 'mcp', '--max-spend', '5'],
    };
    expect(mcpClientConfig('claude', { 'max-spend': '5' }, undefined, paths)).toEqual({
      mcpServers: { clipdesk: server },
    });
    expect(mcpClientConfig('cursor', { 'max-spend': '5' }, undefined, paths)).toEqual({
      mcpServers: { clipdesk: server },
    });
    expect(mcpClientConfig('vscode', { profile: 'Local engine' }, '/data', paths)).toEqual({
      servers: {
        clipdesk: {
          type: 'stdio',
          command: '/opt/node/bin/node',
          args: ['/home/ann/clipdesk/bin/clipdesk.js', 'mcp', '--data', '/data', '--profile', 'Local engine'],
        },
      },
    });
  });

  it('an unknown client or --http is a usage error', () => {
    expect(() => mcpClientConfig('zed', {}, undefined, paths)).toThrow(
      /--print-config must be one of claude, cursor, vscode/,
    );
    expect(() => mcpClientConfig('claude', { http: true }, undefined, paths)).toThrow(/stdio configuration/);
  });
});
