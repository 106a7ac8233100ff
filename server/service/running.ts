import type { Clock } from '../../shared/clock.ts';
import { listKeys, revokeKey, setTier } from '../auth/api-keys.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { ServiceCatalogSync } from '../catalog/sync/service-sync.ts';
import type { ConcurrencyLimiter } from '../limits/concurrency.ts';
import { setAccountLimits } from '../limits/account-limits.ts';
import { ProviderSettings } from '../providers/provider-keys.ts';
import { isProviderError } from '../providers/remote/contract.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';
import type { WebhookSecrets } from '../webhooks/secrets.ts';
import { createKeyWithWebhookSecret } from '../webhooks/secrets.ts';
import type { ServedHttp } from './http-server.ts';
import type { ProviderKeyTest, RunningService } from './options.ts';
import type { WiredProviders } from './providers.ts';

/** What the RunningService's methods act on. */
export interface RunningParts {
  http: Pick<ServedHttp, 'shownHost' | 'port'>;
  close: RunningService['close'];
  db: SqlDatabase;
  clock: Clock;
  webhookSecrets: WebhookSecrets;
  sweep: () => Promise<number>;
  concurrency: ConcurrencyLimiter;
  providers: Pick<WiredProviders, 'settings' | 'providerHealth' | 'catalog'>;
  catalogSync: Pick<ServiceCatalogSync, 'sync'>;
}

/** The service as startService hands it to its caller (the CLI, the embedded engine, tests). */
export function runningService(parts: RunningParts): RunningService {
  const { db, clock, webhookSecrets, concurrency, catalogSync } = parts;
  const { settings, providerHealth, catalog } = parts.providers;
  const { shownHost, port } = parts.http;
  return {
    url: `http://${shownHost}:${port}/v1`,
    host: shownHost,
    port,
    close: parts.close,
    createKey: (o) => createKeyWithWebhookSecret(db, webhookSecrets, clock.now(), o),
    rotateWebhookSecret: (keyId) => webhookSecrets.rotate(keyId, clock.now()),
    revokeKey: (id) => revokeKey(db, clock.now(), id),
    listKeys: (user) => listKeys(db, user),
    setTier: (user, tier) => setTier(db, clock.now(), user, tier),
    setLimits: (user, limits) => setAccountLimits(db, user, limits),
    sweepRetention: parts.sweep,
    stats: {
      maxConcurrent: (user, kind) => concurrency.maxObserved(user, kind),
      running: (user, kind) => concurrency.count(user, kind),
      snapshot: () => concurrency.snapshot(),
    },
    // A new key or address starts the provider's health afresh: the old one's failures (a refused
    // key, a cooldown) say nothing about it.
    setProviderKey: async (id, key) => {
      settings.setAppKey(id, key);
      await providerHealth.reset(id);
    },
    setProviderEnabled: (id, enabled) => settle(() => settings.setEnabled(id, enabled)),
    setProviderBaseUrl: async (id, url) => {
      settings.setBaseUrl(id, url);
      await providerHealth.reset(id);
    },
    testProviderKey: (id, key) => testProviderKey(catalog, id, key),
    providerStatus: async () => {
      await providerHealth.refresh();
      return catalog.providerStatus();
    },
    syncCatalog: (options) => catalogSync.sync(options),
  };
}

/** A synchronous step as a promise that rejects with what it throws (RunningService is all promises). */
function settle<T>(step: () => T): Promise<T> {
  try {
    return Promise.resolve(step());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

const KEY_TEST_TIMEOUT_MS = 20_000;

async function testProviderKey(catalog: Catalog, id: string, key?: string): Promise<ProviderKeyTest> {
  const provider = catalog.remote.find((p) => p.id === id.trim().toLowerCase());
  if (!provider) return { ok: false, message: `unknown provider '${id}'` };
  let apiKey: string;
  try {
    if (key !== undefined) {
      // Validated like a key being stored, so a pasted key with a line break is refused here too.
      const probe = new ProviderSettings({ env: {}, appKeys: { [provider.id]: key } });
      apiKey = probe.key(provider.id)?.key ?? '';
    } else {
      apiKey = catalog.settings.key(provider.id)?.key ?? '';
    }
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  if (apiKey === '') return { ok: false, message: `${provider.name} has no key; add one first` };
  const baseUrl = catalog.settings.baseUrl(provider.id);
  try {
    await provider.adapter.testKey(
      baseUrl === undefined ? { apiKey } : { apiKey, baseUrl },
      AbortSignal.timeout(KEY_TEST_TIMEOUT_MS),
    );
    return { ok: true };
  } catch (error) {
    const message = isProviderError(error)
      ? error.errorClass === 'auth'
        ? `${provider.name} refused the key`
        : error.message
      : `${provider.name} could not be reached to test the key`;
    return { ok: false, message: catalog.redact(message).split(apiKey).join('[redacted]') };
  }
}
