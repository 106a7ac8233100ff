import { Catalog } from '../catalog/catalog.ts';
import { startServiceCatalogSync } from '../catalog/sync/service-sync.ts';
import type { ServiceCatalogSync } from '../catalog/sync/service-sync.ts';
import { DEFAULT_CATALOG_CHECK_MS, DEFAULT_CATALOG_SYNC_HOURS } from '../catalog/sync/service-sync.ts';
import type { Logger } from '../logger.ts';
import { createLocalProviders, MODELS } from '../providers/index.ts';
import { loadCatalog } from '../providers/catalog-file/load.ts';
import type { LoadedCatalog } from '../providers/catalog-file/load.ts';
import { watchKeyFile } from '../providers/key-file-watch.ts';
import type { KeyFileWatch } from '../providers/key-file-watch.ts';
import { ProviderSettings } from '../providers/provider-keys.ts';
import { ADAPTERS } from '../providers/remote/adapters.ts';
import { ProviderHealthTracker } from '../providers/remote/health.ts';
import { createRemoteProviders } from '../providers/remote/providers.ts';
import type { RemoteProvider } from '../providers/types.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';
import type { StartServiceOptions } from './options.ts';

/** The providers as the service routes over them, and what keeps them current while it serves. */
export interface WiredProviders {
  /** The key file's watch: followed once the service is up, stopped when it closes. */
  keyFileWatch: KeyFileWatch;
  settings: ProviderSettings;
  providerHealth: ProviderHealthTracker;
  catalog: Catalog;
  /** The remote providers for a catalog's offers, the options' own providers among them. */
  remoteOf(offers: LoadedCatalog['offers']): RemoteProvider[];
}

/** The options the providers are wired from. */
export type ProviderOptions = Pick<
  StartServiceOptions,
  | 'keyFileCheckMs'
  | 'providerEnv'
  | 'providerKeys'
  | 'providerBaseUrls'
  | 'disabledProviders'
  | 'remoteTimings'
  | 'providerAdapters'
  | 'failProviders'
  | 'remoteProviders'
>;

/** The operator catalog: DATA/catalog.json, or on PostgreSQL the database every node reads. */
function operatorDatabase(db: SqlDatabase): SqlDatabase | undefined {
  return db.dialect === 'postgres' ? db : undefined;
}

/**
 * The key settings, the loaded catalog, the providers' health and the Catalog over them; throws
 * ProviderSettingsError or CatalogFileError for a bad key, base URL or catalog file.
 */
export async function wireProviders(
  dataDir: string,
  db: SqlDatabase,
  logger: Logger,
  opts: ProviderOptions,
): Promise<WiredProviders> {
  // The key file is followed while serving: `providers set-key` and `remove-key` apply without a
  // restart (a new key starts its provider's health afresh, as the app's setProviderKey does).
  const keyFile = await watchKeyFile({
    dataDir,
    apply: async (keys, changed) => {
      settings.setFileKeys(keys);
      for (const id of changed) await providerHealth.reset(id);
      logger.info(`provider keys changed in the key file: ${changed.join(', ')}`);
    },
    log: (m) => logger.warn(m),
    ...(opts.keyFileCheckMs !== undefined ? { intervalMs: opts.keyFileCheckMs } : {}),
  });
  const settings = new ProviderSettings({
    env: opts.providerEnv,
    fileKeys: keyFile.keys,
    appKeys: opts.providerKeys,
    appBaseUrls: opts.providerBaseUrls,
    disabled: opts.disabledProviders,
  });
  const loaded = await loadCatalog(dataDir, operatorDatabase(db));
  const timings = opts.remoteTimings ?? {};
  // Shared through the database by the nodes on PostgreSQL (health.ts); the catalog redacts keys
  // from a failure's message before it is kept (the catalog is made below, and only then called).
  const providerHealth: ProviderHealthTracker = new ProviderHealthTracker({
    failuresBeforeCooldown: timings.failuresBeforeCooldown,
    cooldownMs: timings.cooldownMs,
    ...(db.dialect === 'postgres' ? { db } : {}),
    log: (m) => logger.warn(m),
    redact: (m): string => catalog.redact(m),
  });
  const adapters = { ...ADAPTERS, ...opts.providerAdapters };

  const failing = new Set((opts.failProviders ?? []).map((s) => s.trim().toLowerCase()));
  const providers = createLocalProviders({ failProviders: [...failing] });
  const extra = opts.remoteProviders ?? [];
  const failingIds = new Set(providers.filter((p) => failing.has(p.id) || failing.has(p.slug)).map((p) => p.id));
  const remoteOf = (offers: LoadedCatalog['offers']) => [
    ...createRemoteProviders(offers, adapters).filter((p) => !extra.some((e) => e.id === p.id)),
    ...extra,
  ];
  const catalog = new Catalog({
    models: [...MODELS, ...loaded.models],
    local: providers,
    remote: remoteOf(loaded.offers),
    failing: failingIds,
    settings,
    health: (id) => providerHealth.health(id),
  });
  return { keyFileWatch: keyFile.watch, settings, providerHealth, catalog, remoteOf };
}

/** The scheduled catalog sync, and the reload of the operator catalog when it changes (service-sync.ts). */
export function startCatalogSync(
  at: { dataDir: string; db: SqlDatabase; logger: Logger; node: string },
  providers: Pick<WiredProviders, 'settings' | 'catalog' | 'remoteOf'>,
  opts: Pick<StartServiceOptions, 'providerEnv' | 'catalogSyncIntervalHours' | 'catalogCheckMs'>,
): Promise<ServiceCatalogSync> {
  const { catalog, remoteOf } = providers;
  return startServiceCatalogSync({
    dataDir: at.dataDir,
    db: at.db,
    settings: providers.settings,
    env: opts.providerEnv ?? process.env,
    logger: at.logger,
    node: at.node,
    intervalHours: opts.catalogSyncIntervalHours ?? DEFAULT_CATALOG_SYNC_HOURS,
    checkMs: opts.catalogCheckMs ?? DEFAULT_CATALOG_CHECK_MS,
    reload: async () => {
      const next = await loadCatalog(at.dataDir, operatorDatabase(at.db));
      catalog.reload({ models: [...MODELS, ...next.models], remote: remoteOf(next.offers) });
    },
  });
}
