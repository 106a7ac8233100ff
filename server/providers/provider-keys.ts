import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AdapterSettings, RemoteProviderId } from './remote/contract.ts';
import { REMOTE_PROVIDER_IDS } from './remote/contract.ts';
import { PROVIDER_KEY_MAX, PROVIDER_KEY_MIN, providerKeyFault } from '../../shared/api/provider-keys.ts';
import type { ProviderKeyFault } from '../../shared/api/provider-keys.ts';
import { PROVIDER_KEY_ENV_NAMES } from '../../shared/node/engine-env.ts';

/**
 * Provider keys and settings (docs/providers.md). A key comes from, in this order (the first that has one
 * wins):
 *  1. the embedding app (startService `providerKeys`, `setProviderKey`): the OS keychain, kept in
 *     memory here and never written by the service;
 *  2. the key file in the data directory (`clipdesk-service providers set-key`), owner-only;
 *  3. the environment, under each SDK's usual name (`FAL_KEY`, …).
 * A deliberate, per-service choice beats an ambient variable a shell may have carried along. Base
 * URLs come from the app's setting, else `CLIPDESK_<ID>_BASE_URL`.
 *
 * Keys never appear in messages, logs or records: only `last4`.
 */

// The names live in shared/node/engine-env.ts, which the app reads too; the type keeps them one per provider.
export const PROVIDER_ENV_KEYS: Readonly<Record<RemoteProviderId, string>> = PROVIDER_KEY_ENV_NAMES;

export const PROVIDER_KEY_FILE = 'provider-keys.json';

export type KeySource = 'app' | 'file' | 'env';

export function baseUrlEnvName(id: RemoteProviderId): string {
  return `CLIPDESK_${id.toUpperCase()}_BASE_URL`;
}

/**
 * Where a provider that signs its webhooks with published keys (fal) is asked for them: its JWKS
 * URL, overridden for contract fakes and proxies (docs/security.md).
 */
export function jwksUrlEnvName(id: RemoteProviderId): string {
  return `CLIPDESK_${id.toUpperCase()}_JWKS_URL`;
}

export function isRemoteProviderId(text: string): text is RemoteProviderId {
  return (REMOTE_PROVIDER_IDS as readonly string[]).includes(text);
}

/** A bad key or base URL; the message never contains a key. */
export class ProviderSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderSettingsError';
  }
}

/** Refuses what cannot be a key, under the rule the app applies too (shared/api/provider-keys.ts). */
export function validateProviderKey(id: RemoteProviderId, key: string, from = 'the key'): string {
  const fault = providerKeyFault(key);
  if (fault !== null) throw new ProviderSettingsError(`${from} for ${id} ${KEY_FAULTS[fault]}`);
  return key;
}

/** How a fault reads after "the key for fal"; never the key itself. */
const KEY_FAULTS: Record<ProviderKeyFault, string> = {
  empty: 'is empty',
  whitespace: 'contains whitespace or a line break; a provider key is one unbroken string (paste the key alone)',
  too_short: `is shorter than ${PROVIDER_KEY_MIN} characters`,
  too_long: `is longer than ${PROVIDER_KEY_MAX} characters`,
  characters: 'contains characters no provider key has (printable ASCII only)',
};

/** An http(s) URL, without credentials; returned without a trailing slash. */
export function validateBaseUrl(id: RemoteProviderId, value: string, from = 'the base URL'): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ProviderSettingsError(
      `${from} for ${id} is not a URL; give an http(s) URL such as https://proxy.example/`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ProviderSettingsError(
      `${from} for ${id} must be an http or https URL, not ${url.protocol.replace(/:$/, '')}`,
    );
  if (url.username !== '' || url.password !== '')
    throw new ProviderSettingsError(
      `${from} for ${id} must not carry credentials; the provider key is sent by the SDK`,
    );
  return url.href.replace(/\/+$/, '');
}

export function last4(key: string): string {
  return key.length >= 8 ? key.slice(-4) : '';
}

// ---- the key file -------------------------------------------------------------------------------

export function keyFilePath(dataDir: string): string {
  return join(dataDir, PROVIDER_KEY_FILE);
}

/** The stored keys; an unreadable or malformed file is an error naming the file, never its content. */
export async function readKeyFile(dataDir: string): Promise<Partial<Record<RemoteProviderId, string>>> {
  const file = keyFilePath(dataDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProviderSettingsError(`${file} is not valid JSON; fix it or remove it and set the keys again`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys))
    throw new ProviderSettingsError(`${file} has no "keys" object; fix it or remove it and set the keys again`);
  const out: Partial<Record<RemoteProviderId, string>> = {};
  for (const [id, key] of Object.entries(keys)) {
    if (!isRemoteProviderId(id)) throw new ProviderSettingsError(`${file} names an unknown provider '${id}'`);
    if (typeof key !== 'string') throw new ProviderSettingsError(`${file}: the key for ${id} is not a string`);
    out[id] = validateProviderKey(id, key, `the stored key (${file})`);
  }
  return out;
}

/**
 * Writes the key file owner-only (0600) and atomically: a temporary file created 0600 in the same
 * directory, flushed, then renamed over the old one, so a crash leaves the old file or the new one.
 */
export async function writeKeyFile(dataDir: string, keys: Partial<Record<RemoteProviderId, string>>): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const file = keyFilePath(dataDir);
  const tmp = join(dataDir, `.${PROVIDER_KEY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const ordered = Object.fromEntries(REMOTE_PROVIDER_IDS.flatMap((id) => (keys[id] ? [[id, keys[id]]] : [])));
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify({ version: 1, keys: ordered }, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await chmod(tmp, 0o600); // the umask may have narrowed the mode, never widened it; be explicit
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/** Stores (or, with null, removes) one key in the key file; resolves with whether a key was there before. */
export async function storeKey(dataDir: string, id: RemoteProviderId, key: string | null): Promise<boolean> {
  const keys = await readKeyFile(dataDir);
  const had = keys[id] !== undefined;
  if (key === null) delete keys[id];
  else keys[id] = validateProviderKey(id, key);
  await writeKeyFile(dataDir, keys);
  return had;
}

// ---- the running service's view ------------------------------------------------------------------

export interface ProviderSettingsInput {
  /** The environment to read keys and base URLs from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Keys from the key file. */
  fileKeys?: Partial<Record<RemoteProviderId, string>>;
  /** Keys from the embedding app (its keychain). */
  appKeys?: Partial<Record<string, string>>;
  /** Base URLs from the embedding app's settings. */
  appBaseUrls?: Partial<Record<string, string>>;
  /** Providers switched off. */
  disabled?: readonly string[];
}

/** Keys, base URLs and on/off switches of the remote providers; validated on the way in. */
export class ProviderSettings {
  private readonly env = new Map<RemoteProviderId, string>();
  private readonly file = new Map<RemoteProviderId, string>();
  private readonly app = new Map<RemoteProviderId, string>();
  private readonly envBaseUrls = new Map<RemoteProviderId, string>();
  private readonly envJwksUrls = new Map<RemoteProviderId, string>();
  private readonly appBaseUrls = new Map<RemoteProviderId, string>();
  private readonly disabled = new Set<RemoteProviderId>();

  /** Throws ProviderSettingsError for a bad key, an unknown provider or a base URL that is not http(s). */
  constructor(input: ProviderSettingsInput = {}) {
    const env = input.env ?? process.env;
    for (const id of REMOTE_PROVIDER_IDS) {
      const name = PROVIDER_ENV_KEYS[id];
      const key = env[name];
      if (key !== undefined && key !== '') this.env.set(id, validateProviderKey(id, key, name));
      const url = env[baseUrlEnvName(id)];
      if (url !== undefined && url !== '') this.envBaseUrls.set(id, validateBaseUrl(id, url, baseUrlEnvName(id)));
      const jwks = env[jwksUrlEnvName(id)];
      if (jwks !== undefined && jwks !== '') this.envJwksUrls.set(id, validateBaseUrl(id, jwks, jwksUrlEnvName(id)));
      const stored = input.fileKeys?.[id];
      if (stored !== undefined) this.file.set(id, validateProviderKey(id, stored, 'the stored key'));
    }
    for (const [id, key] of Object.entries(input.appKeys ?? {})) if (key !== undefined) this.setAppKey(id, key);
    for (const [id, url] of Object.entries(input.appBaseUrls ?? {})) if (url !== undefined) this.setBaseUrl(id, url);
    for (const id of input.disabled ?? []) this.setEnabled(id, false);
  }

  key(id: RemoteProviderId): { key: string; source: KeySource } | undefined {
    const app = this.app.get(id);
    if (app !== undefined) return { key: app, source: 'app' };
    const file = this.file.get(id);
    if (file !== undefined) return { key: file, source: 'file' };
    const env = this.env.get(id);
    return env === undefined ? undefined : { key: env, source: 'env' };
  }

  configured(id: RemoteProviderId): boolean {
    return this.key(id) !== undefined;
  }

  enabled(id: RemoteProviderId): boolean {
    return !this.disabled.has(id);
  }

  baseUrl(id: RemoteProviderId): string | undefined {
    return this.appBaseUrls.get(id) ?? this.envBaseUrls.get(id);
  }

  /** Every key in use, for redacting messages that might (against the adapters' contract) carry one. */
  allKeys(): string[] {
    return [...this.app.values(), ...this.file.values(), ...this.env.values()];
  }

  /** The app's key (null removes it; the key file and environment then apply again). */
  setAppKey(id: string, key: string | null): void {
    const provider = checkId(id);
    if (key === null) this.app.delete(provider);
    else this.app.set(provider, validateProviderKey(provider, key));
  }

  /** The key file's keys, after `providers set-key` changed it. */
  setFileKeys(keys: Partial<Record<RemoteProviderId, string>>): void {
    this.file.clear();
    for (const id of REMOTE_PROVIDER_IDS) {
      const key = keys[id];
      if (key !== undefined) this.file.set(id, validateProviderKey(id, key, 'the stored key'));
    }
  }

  setEnabled(id: string, enabled: boolean): void {
    const provider = checkId(id);
    if (enabled) this.disabled.delete(provider);
    else this.disabled.add(provider);
  }

  /** The app's base URL (null: back to `CLIPDESK_<ID>_BASE_URL` or the SDK's default). */
  setBaseUrl(id: string, url: string | null): void {
    const provider = checkId(id);
    if (url === null || url.trim() === '') this.appBaseUrls.delete(provider);
    else this.appBaseUrls.set(provider, validateBaseUrl(provider, url));
  }

  /** What an adapter needs to call the provider; undefined when it has no key. */
  adapterSettings(id: RemoteProviderId): AdapterSettings | undefined {
    const key = this.key(id);
    if (!key) return undefined;
    const baseUrl = this.baseUrl(id);
    const jwksUrl = this.envJwksUrls.get(id);
    return {
      apiKey: key.key,
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(jwksUrl === undefined ? {} : { jwksUrl }),
    };
  }
}

function checkId(id: string): RemoteProviderId {
  const text = id.trim().toLowerCase();
  if (!isRemoteProviderId(text))
    throw new ProviderSettingsError(
      `unknown provider '${id}' (providers with keys: ${REMOTE_PROVIDER_IDS.join(', ')})`,
    );
  return text;
}
