import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { startService } from '../../../server/index.ts';
import type { RunningService, StartServiceOptions } from '../../../server/index.ts';
import type { TierName } from '../../../shared/api/index.ts';
import type { Logger } from '../../../shared/node/logger.ts';
import { engineProviders, type EngineProviderOptions, type EngineProviders } from '../providers/index.ts';
import type { SecretStore } from '../secrets/index.ts';

/**
 * The embedded Local engine: the service, started in-process on loopback, with its own user and
 * key created on first run. The key goes to the keychain; when there is none, a key is made for
 * this run only and revoked on close, so no file ever holds it.
 */
export interface LocalEngineOptions {
  dataDir: string;
  secrets: SecretStore;
  /** 0 (default): any free port. */
  port?: number;
  user?: string;
  tier?: TierName;
  /** Where the service's warnings and errors go (a provider failure, a failed sweep, a 500). */
  logger: Logger;
  /** The AI providers' keys, base URLs and switches as stored by the app (core/providers). */
  providers?: EngineProviderOptions;
}

export interface LocalEngine {
  /** `http://127.0.0.1:PORT/v1` */
  url: string;
  user: string;
  /** Where the key lives: 'keychain' or 'ephemeral' (this run only). */
  keyStorage: 'keychain' | 'ephemeral';
  getKey(): string;
  service: RunningService;
  /** The service's provider controls; null for a service without them. */
  providers: EngineProviders | null;
  close(): Promise<void>;
}

export const LOCAL_ENGINE_USER = 'local';

export function localEngineKeyAccount(dataDir: string): string {
  return `local-engine:${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)}`;
}

export async function startLocalEngine(options: LocalEngineOptions): Promise<LocalEngine> {
  const dataDir = resolve(options.dataDir);
  const user = options.user ?? LOCAL_ENGINE_USER;
  const tier = options.tier ?? 'pro';
  const logger = options.logger;
  const serviceOptions: StartServiceOptions & EngineProviderOptions = {
    dataDir,
    logger,
    ...(options.port === undefined ? {} : { port: options.port }),
    // The engine serves only this machine's user, on loopback: a start image on their own network
    // (a NAS, a local dev server) is theirs to use.
    allowPrivateImageUrls: true,
    // Webhooks to this machine (a local receiver) are the owner's own choice here, as are image URLs.
    allowPrivateWebhooks: true,
    // Provider keys come from the keychain (Settings → Providers), never from whatever shell
    // happened to start the app.
    providerEnv: {},
    ...options.providers,
  };
  const service = await startService(serviceOptions);
  try {
    let key = await keyFromKeychain(service, options.secrets, localEngineKeyAccount(dataDir), user, tier, logger);
    let ephemeralId: string | null = null;
    if (key === null) {
      const created = await service.createKey({ user, tier, name: 'Clipdesk (this run)' });
      key = created.key;
      ephemeralId = created.id;
    }
    const theKey = key;
    logger.info(
      { url: service.url, keyStorage: ephemeralId === null ? 'keychain' : 'ephemeral' },
      'Local engine started',
    );
    return {
      url: service.url,
      user,
      keyStorage: ephemeralId === null ? 'keychain' : 'ephemeral',
      getKey: () => theKey,
      service,
      providers: engineProviders(service),
      async close() {
        logger.info('Local engine stopping');
        if (ephemeralId !== null) await service.revokeKey(ephemeralId).catch(() => false);
        await service.close();
      },
    };
  } catch (error) {
    await service.close();
    throw error;
  }
}

/**
 * The engine's key kept in the keychain across runs, or null when the keychain cannot hold it:
 * none present, or one that fails (a locked collection whose unlock prompt was dismissed). The
 * engine then runs on a key for this run only, so a keychain problem never stops the app.
 */
async function keyFromKeychain(
  service: RunningService,
  secrets: SecretStore,
  account: string,
  user: string,
  tier: TierName,
  logger: Logger,
): Promise<string | null> {
  let created: { id: string; key: string } | null = null;
  try {
    if (!(await secrets.status()).available) return null;
    const stored = await secrets.get(account);
    if (stored !== null) {
      const live = (await service.listKeys(user)).some((k) => k.revokedAt === null && k.last4 === stored.slice(-4));
      if (live) return stored;
    }
    created = await service.createKey({ user, tier, name: 'Clipdesk app' });
    await secrets.set(account, created.key);
    return created.key;
  } catch (error) {
    logger.warn({ err: error }, 'the keychain cannot hold the Local engine key; using a key for this run only');
    // A key the keychain did not take must not stay valid with no one holding it.
    if (created) await service.revokeKey(created.id).catch(() => false);
    return null;
  }
}
