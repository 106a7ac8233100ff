import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { startService } from '../../../server/index.ts';
import type { RunningService } from '../../../server/index.ts';
import type { TierName } from '../../../shared/api/index.ts';
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
}

export interface LocalEngine {
  /** `http://127.0.0.1:PORT/v1` */
  url: string;
  user: string;
  /** Where the key lives: 'keychain' or 'ephemeral' (this run only). */
  keyStorage: 'keychain' | 'ephemeral';
  getKey(): string;
  service: RunningService;
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
  const service = await startService({ dataDir, ...(options.port === undefined ? {} : { port: options.port }) });
  try {
    const account = localEngineKeyAccount(dataDir);
    const status = await options.secrets.status();
    let key: string | null = null;
    let ephemeralId: string | null = null;
    if (status.available) {
      key = await options.secrets.get(account).catch(() => null);
      if (key !== null) {
        const last4 = key.slice(-4);
        const live = (await service.listKeys(user)).some((k) => k.revokedAt === null && k.last4 === last4);
        if (!live) key = null;
      }
      if (key === null) {
        const created = await service.createKey({ user, tier, name: 'Clipdesk app' });
        await options.secrets.set(account, created.key);
        key = created.key;
      }
    } else {
      const created = await service.createKey({ user, tier, name: 'Clipdesk (this run)' });
      key = created.key;
      ephemeralId = created.id;
    }
    const theKey = key;
    return {
      url: service.url,
      user,
      keyStorage: ephemeralId === null ? 'keychain' : 'ephemeral',
      getKey: () => theKey,
      service,
      async close() {
        if (ephemeralId !== null) await service.revokeKey(ephemeralId).catch(() => false);
        await service.close();
      },
    };
  } catch (error) {
    await service.close();
    throw error;
  }
}
