import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { providerKeyProblem, type ProviderKeyId } from '../../../shared/ipc/schemas/providers.ts';
import type { SecretStore, SecretStoreStatus } from '../secrets/index.ts';
import { CoreError } from '../errors.ts';

/**
 * Provider keys (fal, Replicate, …) for the embedded Local engine, in the OS keychain beside the
 * engine's own key: one entry per provider, filed under the engine's data folder so that two
 * engines (a test's, the user's) never share one. Nothing but this module reads them; the rest
 * of the app sees `{configured, last4}`.
 */
export interface ProviderKeyInfo {
  configured: boolean;
  last4: string | null;
}

export interface ProviderKeyStore {
  /** Rejects with SecretStoreUnavailableError (`keychain_unavailable`) when no keychain can keep it. */
  set(id: ProviderKeyId, key: string): Promise<ProviderKeyInfo>;
  remove(id: ProviderKeyId): Promise<ProviderKeyInfo>;
  /** The key itself, for the engine only; null when none is stored or the keychain cannot be read. */
  get(id: ProviderKeyId): Promise<string | null>;
  info(id: ProviderKeyId): Promise<ProviderKeyInfo>;
  /** Where stored keys are kept (the keychain's backend, or 'file' for the user's key file), in one line too. */
  storeStatus(): Promise<SecretStoreStatus>;
  /** Every stored key, for the engine's start. */
  all(ids: readonly ProviderKeyId[]): Promise<Partial<Record<ProviderKeyId, string>>>;
}

/** A key that is not a key (whitespace, length, characters): the IPC answers `invalid_input`. */
export class ProviderKeyError extends CoreError {
  declare readonly code: 'invalid_input';
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'ProviderKeyError';
  }
}

export function providerKeyAccount(engineDataDir: string, id: ProviderKeyId): string {
  const scope = createHash('sha256').update(resolve(engineDataDir)).digest('hex').slice(0, 16);
  return `provider:${id}:${scope}`;
}

export function createProviderKeyStore(secrets: SecretStore, engineDataDir: string): ProviderKeyStore {
  const account = (id: ProviderKeyId): string => providerKeyAccount(engineDataDir, id);
  const info = async (id: ProviderKeyId): Promise<ProviderKeyInfo> => {
    const key = await store.get(id);
    return { configured: key !== null, last4: key === null ? null : key.slice(-4) };
  };
  const store: ProviderKeyStore = {
    async set(id, key) {
      // The IPC schema checked it already; the store checks again so no other caller can file a
      // key with a line break in it.
      const problem = providerKeyProblem(key);
      if (problem) throw new ProviderKeyError(problem);
      await secrets.set(account(id), key);
      return { configured: true, last4: key.slice(-4) };
    },
    async remove(id) {
      await secrets.delete(account(id));
      return info(id);
    },
    async get(id) {
      // A keychain that went away (locked, no Secret Service) reads as "no key": the provider is
      // then simply not configured, which Settings shows.
      return secrets.get(account(id)).catch(() => null);
    },
    info,
    storeStatus: () => secrets.status(),
    async all(ids) {
      const out: Partial<Record<ProviderKeyId, string>> = {};
      if (!(await secrets.status()).available) return out;
      for (const id of ids) {
        const key = await store.get(id);
        if (key !== null) out[id] = key;
      }
      return out;
    },
  };
  return store;
}
