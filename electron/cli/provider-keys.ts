import { PROVIDER_KEY_IDS, providerKeyProblem, type ProviderKeyId } from '../../shared/ipc/schemas/providers.ts';
import { dataFolderOwner } from '../../shared/node/data-folder-lock.ts';
import type { Logger } from '../../shared/node/logger.ts';
import type { Profiles } from '../core/profiles/index.ts';
import { defaultEngineDataDir } from '../core/settings/index.ts';
import {
  createProviderKeyStore,
  createProviderManager,
  createProviderSettings,
  type EngineProviderStatus,
  type ProviderManager,
} from '../core/providers/index.ts';
import { NO_KEYCHAIN_ADVICE, type SecretStore, type SecretStoreStatus } from '../core/secrets/index.ts';
import type { SettingsStore } from '../core/settings/index.ts';
import { UsageError } from './errors.ts';
import type { CliIo } from './io.ts';

/**
 * `clipdesk providers set-key NAME`: a provider key for the built-in engine, stored where Settings
 * → Providers stores it (the OS keychain, or the key file with `--key-store file`), so the app, the
 * CLI and `clipdesk doctor` all see it. The key is read from standard input, never argv.
 */
export interface CliStores {
  userDataDir: string;
  secrets: SecretStore;
  profiles: Profiles;
  settingsStore: SettingsStore;
}

/** The built-in engine's provider keys and settings, as the app keeps them. */
export function engineProviderManager(stores: CliStores, logger: Logger): ProviderManager {
  return createProviderManager({
    keys: createProviderKeyStore(stores.secrets, defaultEngineDataDir(stores.userDataDir)),
    settings: createProviderSettings(stores.settingsStore),
    logger,
  });
}

function providerId(name: string | undefined): ProviderKeyId {
  const id = (name ?? '').trim().toLowerCase();
  if (!(PROVIDER_KEY_IDS as readonly string[]).includes(id))
    throw new UsageError(
      `providers set-key needs a provider: one of ${PROVIDER_KEY_IDS.join(', ')}${name ? ` (not '${name}')` : ''}`,
    );
  return id as ProviderKeyId;
}

export async function providersSetKey(
  io: CliIo,
  stores: CliStores,
  name: string | undefined,
  logger: Logger,
): Promise<void> {
  const id = providerId(name);
  const key = (await io.readStdin()).replace(/\r?\n$/, '');
  if (key === '') throw new UsageError(`providers set-key reads the ${id} key from standard input; nothing was given`);
  const problem = providerKeyProblem(key);
  if (problem) throw new UsageError(problem);
  const status = await stores.secrets.status();
  if (!status.available) throw new KeyStoreUnavailable(status);
  const info = await engineProviderManager(stores, logger).setKey(id, key);
  const where = status.backend === 'file' ? 'the key file' : 'the OS keychain';
  io.stderr(`Stored the ${id} key ending in ${info.last4 ?? '????'} for the built-in engine in ${where}\n`);
  if (status.backend === 'file') io.stderr(`${status.message}\n`);
  const running = runningEngineNote(defaultEngineDataDir(stores.userDataDir));
  if (running) io.stderr(`${running}\n`);
}

/**
 * When a live process runs the engine now, when it takes the key: the app's or a command's engine
 * reads stored keys when it starts; a `clipdesk-service serve` on the folder reads its own key file
 * (docs/architecture.md, "One engine per data folder").
 */
export function runningEngineNote(engineDataDir: string): string | null {
  const state = dataFolderOwner(engineDataDir);
  if (!state.held) return null;
  const owner = state.owner;
  const who = owner ? `${owner.program} (pid ${owner.pid})` : 'another process';
  if (owner && !owner.program.includes('Local engine'))
    return `The engine's folder is served by ${who}, which takes provider keys from its own provider-keys.json (clipdesk-service providers set-key NAME --data ${engineDataDir}), not from here.`;
  return `The Local engine running now in ${who} uses this key from its next start: restart it, or let that command end.`;
}

/**
 * No store can keep the key: exit 1 with the store's own words and what to do instead (a key file
 * that does not open says its own fix: the passphrase, not another store).
 */
export class KeyStoreUnavailable extends Error {
  constructor(status: SecretStoreStatus) {
    const { message } = status;
    super(
      status.backend === 'file' || message.includes(NO_KEYCHAIN_ADVICE) ? message : `${message} ${NO_KEYCHAIN_ADVICE}`,
    );
    this.name = 'KeyStoreUnavailable';
  }
}

/**
 * Said on stderr by every command that reaches a service: keys in a key file that does not open
 * (the passphrase missing or wrong) are not silently "no key" (docs/security.md).
 */
export async function sayUnreadableKeyFile(secrets: SecretStore, io: CliIo): Promise<void> {
  const status = await secrets.status().catch(() => null);
  if (status?.backend === 'file' && !status.available) io.stderr(`clipdesk: ${status.message}\n`);
}

/** Where a provider's key in use comes from, in the user's words: keychain, environment or file. */
export function keySourceText(status: EngineProviderStatus, store: SecretStoreStatus): string {
  switch (status.keySource) {
    case 'app':
      return store.backend === 'file' ? 'key file' : 'keychain';
    case 'file':
      return "file (the engine's provider-keys.json)";
    case 'env':
      return `environment (${status.envKey})`;
    default:
      return 'none';
  }
}
