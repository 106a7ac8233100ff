import type { ProviderKeyId } from '../../../shared/ipc/schemas/providers.ts';
import type { Logger } from '../../../shared/node/logger.ts';
import type { EngineKeyTest, EngineProviderOptions, EngineProviders } from './engine.ts';
import type { ProviderKeyInfo, ProviderKeyStore } from './key-store.ts';
import type { ProviderSettings } from './settings.ts';
import { CoreError } from '../errors.ts';

/**
 * The one place a provider's key, switch or base URL changes: it is stored (keychain, settings
 * file) and, when the Local engine runs, applied to it at once. The engine reads the stored
 * state when it starts (`startOptions`), so an engine started later sees every change too.
 */
export interface ProviderManager {
  startOptions(ids: readonly ProviderKeyId[]): Promise<EngineProviderOptions>;
  /**
   * The running engine's controls (null: none, or a service without them). A change stored while
   * the engine was starting (after `startOptions` was read) is applied to it now.
   */
  attach(engine: EngineProviders | null): Promise<void>;
  engine(): EngineProviders | null;
  setKey(id: ProviderKeyId, key: string): Promise<ProviderKeyInfo>;
  removeKey(id: ProviderKeyId): Promise<ProviderKeyInfo>;
  setEnabled(id: ProviderKeyId, enabled: boolean): Promise<void>;
  setBaseUrl(id: ProviderKeyId, url: string | null): Promise<void>;
  testKey(id: ProviderKeyId, name: string): Promise<{ ok: boolean; message: string }>;
  keys: ProviderKeyStore;
  settings: ProviderSettings;
}

/** The engine cannot do this (not started, or a build without provider controls): `not_available`. */
export class ProviderEngineUnavailableError extends CoreError {
  declare readonly code: 'not_available';
  constructor(message: string) {
    super('not_available', message);
    this.name = 'ProviderEngineUnavailableError';
  }
}

export interface ProviderManagerOptions {
  keys: ProviderKeyStore;
  settings: ProviderSettings;
  logger: Logger;
}

export function createProviderManager(options: ProviderManagerOptions): ProviderManager {
  const { keys, settings, logger } = options;
  let engine: EngineProviders | null = null;
  // Counts stored changes, so `attach` can tell whether the engine started with the latest state.
  let version = 0;
  let startedAt: { version: number; ids: readonly ProviderKeyId[] } | null = null;

  // Stored first, then applied: a change the engine does not take is still there at its next
  // start, and is logged (without the key) rather than failing the user's save.
  const apply = async (what: string, id: ProviderKeyId, change: (e: EngineProviders) => unknown): Promise<void> => {
    version++;
    if (!engine) return;
    try {
      await change(engine);
    } catch (error) {
      logger.warn({ err: error, provider: id }, `the Local engine did not apply the provider's new ${what}`);
    }
  };

  return {
    keys,
    settings,
    async startOptions(ids) {
      startedAt = { version, ids };
      const s = settings.get();
      return {
        providerKeys: await keys.all(ids),
        providerBaseUrls: s.baseUrls,
        disabledProviders: s.disabled,
      };
    },
    async attach(next) {
      engine = next;
      const started = startedAt;
      if (!next || !started || started.version === version) return;
      const s = settings.get();
      for (const id of started.ids) {
        const key = await keys.get(id);
        await apply('key', id, (e) => e.setProviderKey(id, key));
        await apply('switch', id, (e) => e.setProviderEnabled(id, !s.disabled.includes(id)));
        await apply('base URL', id, (e) => e.setProviderBaseUrl(id, s.baseUrls[id] ?? null));
      }
    },
    engine: () => engine,
    async setKey(id, key) {
      const info = await keys.set(id, key);
      await apply('key', id, (e) => e.setProviderKey(id, key));
      return info;
    },
    async removeKey(id) {
      const info = await keys.remove(id);
      await apply('key', id, (e) => e.setProviderKey(id, null));
      return info;
    },
    async setEnabled(id, enabled) {
      settings.setEnabled(id, enabled);
      await apply('switch', id, (e) => e.setProviderEnabled(id, enabled));
    },
    async setBaseUrl(id, url) {
      settings.setBaseUrl(id, url);
      await apply('base URL', id, (e) => e.setProviderBaseUrl(id, url));
    },
    async testKey(id, name) {
      if ((await keys.get(id)) === null)
        return { ok: false, message: `No key is stored for ${name}. Paste one first.` };
      if (!engine) throw new ProviderEngineUnavailableError('The Local engine cannot test provider keys yet.');
      let result: EngineKeyTest;
      try {
        result = await engine.testProviderKey(id);
      } catch (error) {
        logger.warn({ err: error, provider: id }, 'testing the provider key failed');
        return { ok: false, message: `Could not reach ${name} to test the key. Try again in a moment.` };
      }
      return result.ok ? { ok: true, message: `${name} accepted the key.` } : { ok: false, message: result.message };
    },
  };
}
