import { randomUUID } from 'node:crypto';
import type { KeyStatus, Profile, ProfileList, Settings } from '../../../shared/ipc/index.ts';
import { CoreError } from '../errors.ts';
import type { SecretBackend, SecretStore } from '../secrets/index.ts';
import {
  createConfSettingsStore,
  defaultSettings,
  LOCAL_PROFILE_ID,
  type SettingsStore,
  type StoredProfile,
} from '../settings/index.ts';

/**
 * Service profiles and durable settings. The embedded Local engine is the default profile; any
 * number of remote services (base URL + key) can be added. Settings hold no key: keys live in the
 * keychain under `profile:<id>`, and the Local engine's under its own account.
 */
export { defaultSettings, LOCAL_PROFILE_ID };

export type ProfilesOptions = {
  secrets: SecretStore;
  /**
   * CLIPDESK_API_KEY: the key for remote profiles, winning over a stored one, as it does in the
   * CLI. It lets a machine without a keychain reach a remote service; Settings says it is in use.
   */
  envKey?: string | null;
} & (
  | {
      /** Where the settings live: electron-store in the app, `conf` elsewhere (core/settings). */
      store: SettingsStore;
    }
  | {
      /** Shorthand for a `conf` store of `settings.json` in this folder (the CLI's). */
      dir: string;
    }
);

export interface Profiles {
  list(): Promise<ProfileList>;
  get(id: string): Promise<Profile>;
  active(): Promise<Profile>;
  activeId(): string;
  activate(id: string): Promise<Profile>;
  create(input: { name: string; baseUrl: string; key?: string }): Promise<Profile>;
  update(input: { id: string; name?: string; baseUrl?: string }): Promise<Profile>;
  remove(id: string): Promise<ProfileList>;
  /** The Local engine's loopback URL is only known once it runs. */
  setLocalBaseUrl(url: string): void;
  getKey(id: string): Promise<string | null>;
  setKey(id: string, key: string): Promise<KeyStatus>;
  removeKey(id: string): Promise<KeyStatus>;
  keyStatus(id: string): Promise<KeyStatus>;
  /** A profile's spending caps (docs/workflows.md); none set: both null. */
  budget(id: string): { daily: number | null; monthly: number | null };
  setBudget(id: string, budget: { daily: number | null; monthly: number | null }): Promise<Profile>;
  /** Keychain account under which a profile's key is filed. */
  keyAccount(id: string): string;
  settings(): Settings;
  /** Main-side: the IPC route takes only `SettingsPatch`; folder and ffmpeg paths come through core/settings/path-rules.ts checks. */
  updateSettings(patch: Partial<Settings>): Settings;
  onChange(listener: () => void): () => void;
}

export class ProfileError extends CoreError {
  declare readonly code: 'not_found' | 'invalid_input';
  constructor(code: 'not_found' | 'invalid_input', message: string) {
    super(code, message);
    this.name = 'ProfileError';
  }
}

export function keyBackendOf(backend: SecretBackend): KeyStatus['backend'] {
  if (backend === 'none') return 'none';
  if (backend === 'safe-storage') return 'safeStorage';
  if (backend === 'file') return 'file';
  return 'keychain';
}

/** A base URL as stored: http(s), no credentials, no trailing slash. */
function normaliseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    throw new ProfileError('invalid_input', `Not a URL: ${url}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new ProfileError('invalid_input', 'The base URL must be http(s)');
  if (u.username || u.password) throw new ProfileError('invalid_input', 'The base URL must not carry credentials');
  return u.href.replace(/\/+$/, '');
}

/** A profile's key as the renderer may see it: whether there is one, its last 4 characters, where it is kept. */
async function keyStatusOf(
  keys: { secrets: SecretStore; envKey: string | null },
  kind: StoredProfile['kind'],
  account: string,
): Promise<KeyStatus> {
  const { secrets, envKey } = keys;
  // The Local engine needs no key (main holds its own): it has no key status, and the keychain
  // is not asked, so a missing Secret Service says nothing about it.
  if (kind === 'local') return { hasKey: false, last4: null, backend: 'none' };
  if (envKey !== null)
    return {
      hasKey: true,
      last4: envKey.slice(-4),
      backend: 'env',
      message: 'The key comes from CLIPDESK_API_KEY, which wins over a stored key.',
    };
  const status = await secrets.status();
  const key = await secrets.get(account).catch(() => null);
  return {
    hasKey: key !== null,
    last4: key === null ? null : key.slice(-4),
    backend: keyBackendOf(status.backend),
    // The key file always says how it protects keys (a plain one warns); a keychain only when it fails.
    ...(status.available && status.backend !== 'file' ? {} : { message: status.message }),
  };
}

export function createProfiles(options: ProfilesOptions): Profiles {
  const store: SettingsStore = 'store' in options ? options.store : createConfSettingsStore(options.dir);
  const { secrets } = options;
  const envKey = options.envKey?.trim() || null;
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const l of listeners) l();
  };
  let localBaseUrl = '';

  const stored = (): StoredProfile[] => store.get('profiles');
  const find = (id: string): StoredProfile => {
    const p = stored().find((x) => x.id === id);
    if (!p) throw new ProfileError('not_found', `No profile with id ${id}`);
    return p;
  };
  const keyAccount = (id: string): string => `profile:${id}`;

  const keyStatus = async (id: string): Promise<KeyStatus> =>
    keyStatusOf({ secrets, envKey }, find(id).kind, keyAccount(id));

  async function view(p: StoredProfile): Promise<Profile> {
    return {
      id: p.id,
      name: p.name,
      kind: p.kind,
      baseUrl: p.kind === 'local' ? localBaseUrl : p.baseUrl,
      key: await keyStatus(p.id),
      budget: p.budget ?? { daily: null, monthly: null },
    };
  }

  /** Writes `next` in place of the stored profile with its id. */
  const replace = (next: StoredProfile): void =>
    store.set(
      'profiles',
      stored().map((x) => (x.id === next.id ? next : x)),
    );

  const profiles: Profiles = {
    async list() {
      return { activeId: store.get('activeId'), profiles: await Promise.all(stored().map(view)) };
    },
    get: async (id) => view(find(id)),
    async active() {
      const id = store.get('activeId');
      return view(stored().find((p) => p.id === id) ?? find(LOCAL_PROFILE_ID));
    },
    activeId: () => store.get('activeId'),
    async activate(id) {
      const p = find(id);
      store.set('activeId', id);
      changed();
      return view(p);
    },
    async create(input) {
      const profile: StoredProfile = {
        id: randomUUID(),
        name: input.name.trim(),
        kind: 'remote',
        baseUrl: normaliseUrl(input.baseUrl),
      };
      if (input.key) await secrets.set(keyAccount(profile.id), input.key.trim());
      store.set('profiles', [...stored(), profile]);
      changed();
      return view(profile);
    },
    async update(input) {
      const p = find(input.id);
      if (p.kind === 'local' && input.baseUrl !== undefined)
        throw new ProfileError('invalid_input', "The Local engine's address is not configurable");
      const next: StoredProfile = {
        ...p,
        ...(input.name !== undefined ? { name: input.name.trim() } : {}),
        ...(input.baseUrl !== undefined ? { baseUrl: normaliseUrl(input.baseUrl) } : {}),
      };
      replace(next);
      changed();
      return view(next);
    },
    async remove(id) {
      const p = find(id);
      if (p.kind === 'local') throw new ProfileError('invalid_input', 'The Local engine profile cannot be removed');
      await secrets.delete(keyAccount(id)).catch(() => false);
      store.set(
        'profiles',
        stored().filter((x) => x.id !== id),
      );
      if (store.get('activeId') === id) store.set('activeId', LOCAL_PROFILE_ID);
      changed();
      return profiles.list();
    },
    setLocalBaseUrl(url) {
      localBaseUrl = url;
      changed();
    },
    async getKey(id) {
      if (find(id).kind === 'remote' && envKey !== null) return envKey;
      return secrets.get(keyAccount(id));
    },
    async setKey(id, key) {
      if (find(id).kind === 'local') throw new ProfileError('invalid_input', 'The Local engine needs no API key');
      await secrets.set(keyAccount(id), key.trim());
      changed();
      return keyStatus(id);
    },
    async removeKey(id) {
      find(id);
      await secrets.delete(keyAccount(id));
      changed();
      return keyStatus(id);
    },
    keyStatus,
    keyAccount,
    budget: (id) => stored().find((p) => p.id === id)?.budget ?? { daily: null, monthly: null },
    async setBudget(id, budget) {
      const p = find(id);
      const next: StoredProfile = { ...p, budget: { daily: budget.daily, monthly: budget.monthly } };
      replace(next);
      changed();
      return view(next);
    },
    settings: () => ({ ...defaultSettings(), ...store.get('settings') }),
    updateSettings(patch) {
      const next = { ...defaultSettings(), ...store.get('settings'), ...patch };
      store.set('settings', next);
      changed();
      return next;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return profiles;
}
