import type { ProviderRecord } from '../../../shared/api/model-records.ts';
import {
  PROVIDER_KEY_IDS,
  REMOTE_MODEL_LIST,
  type ProviderEntry,
  type ProviderHealthView,
  type ProviderKeyId,
  type ProvidersList,
} from '../../../shared/ipc/schemas/providers.ts';
import { EngineElsewhereError, type EngineCatalogSync } from '../../core/engine/index.ts';
import type { EngineProviderStatus, ProviderManager } from '../../core/providers/index.ts';
import { ipcError } from '../errors.ts';
import type { SecretBackend } from '../../core/secrets/index.ts';
import type { EventBus } from '../events.ts';
import type { DomainHandlers, ServiceSession } from '../types.ts';

/**
 * Settings → Providers. The Local engine's providers are listed from its `/providers` and its
 * provider status, with the key status and settings main holds; a remote profile's are its
 * `/providers`, read-only (its operator holds the keys). Changes go through the provider manager
 * (keychain, settings file, the running engine) and announce `providers.changed`.
 */
export interface ProvidersDeps {
  manager: ProviderManager;
  session: () => Promise<ServiceSession>;
  /** Whether the active profile is the Local engine. */
  activeIsLocal: () => Promise<boolean>;
  /** Starts the Local engine if it is not running (testing a key needs it). */
  startEngine: () => Promise<unknown>;
  /** The running Local engine's catalog sync (started if it is not running). */
  catalogSync: () => Promise<EngineCatalogSync>;
  bus: EventBus;
}

const isKeyId = (id: string): id is ProviderKeyId => (PROVIDER_KEY_IDS as readonly string[]).includes(id);

async function serviceProviders(s: ServiceSession, signal: AbortSignal | undefined): Promise<ProviderRecord[]> {
  const all: ProviderRecord[] = [];
  for (let page = 0; page < 50; page++) {
    const res = await s.api.listProviders({ limit: 100, page }, signal ? { signal } : {});
    all.push(...res.providers);
    if (all.length >= res.total || res.providers.length === 0) break;
  }
  return all;
}

/**
 * Health as a service's provider record tells it (docs/api.md: remote providers `ok`/`unhealthy`
 * with the class of the last error and since when; built-in ones `available`/`unavailable`).
 */
export function recordHealth(record: ProviderRecord): ProviderHealthView {
  const { status, lastError } = record;
  return {
    status:
      status === 'ok' || status === 'available'
        ? 'ok'
        : status === 'unhealthy' || status === 'unavailable'
          ? 'unhealthy'
          : 'unknown',
    lastError: lastError?.class ?? null,
    message: lastError?.message ?? null,
    since: record.since ?? lastError?.at ?? null,
  };
}

function engineHealth(health: EngineProviderStatus['health']): ProviderHealthView {
  const last = health.lastError;
  return {
    status: health.status,
    lastError: last?.class ?? null,
    message: last?.message ?? null,
    since: health.since ?? last?.at ?? null,
  };
}

/** A service's provider record as Settings shows it, with nothing the app adds. */
export function entryFromRecord(record: ProviderRecord): ProviderEntry {
  const kind = record.kind ?? (isKeyId(record.id) ? 'remote' : 'local');
  return {
    id: record.id,
    slug: record.slug,
    name: record.name,
    description: record.description ?? '',
    // Another service may tell only id, slug and name (docs/api.md "Extensions").
    status: record.status ?? 'unknown',
    models: record.models ?? [],
    features: record.features ?? [],
    kind,
    // A service that does not say is an older one, whose providers are all built in.
    configured: record.configured ?? kind === 'local',
    last4: null,
    enabled: record.enabled ?? true,
    baseUrl: null,
    health: recordHealth(record),
  };
}

/** Where a key the app stored is kept, as Settings names it. */
export function storedKeySource(store: SecretBackend): string {
  return store === 'file' ? 'key file' : 'keychain';
}

/** Where the engine's own key comes from when the app stored none: its environment or its key file. */
export function engineKeySource(status: EngineProviderStatus | undefined): string | null {
  if (!status?.configured) return null;
  if (status.keySource === 'env') return `environment (${status.envKey})`;
  if (status.keySource === 'file') return 'file (provider-keys.json)';
  return 'keychain';
}

/** The Local engine's AI providers (every one, configured or not) and then its built-in ones. */
export async function localProviderEntries(
  manager: ProviderManager,
  records: readonly ProviderRecord[],
): Promise<ProviderEntry[]> {
  const status = (await manager.engine()?.providerStatus()) ?? [];
  const store = await manager.keys.storeStatus();
  const remote = await Promise.all(
    PROVIDER_KEY_IDS.map(async (id): Promise<ProviderEntry> => {
      const record = records.find((r) => r.id === id);
      const st = status.find((x) => x.id === id);
      const key = await manager.keys.info(id);
      return {
        id,
        slug: record?.slug ?? id,
        name: st?.name ?? record?.name ?? id,
        description: st?.description ?? record?.description ?? '',
        status: record?.status ?? st?.health.status ?? 'unknown',
        models: st?.models ?? record?.models ?? [],
        features: record?.features ?? [],
        kind: 'remote',
        // The keychain is the authority; the engine may also hold one from its environment.
        configured: key.configured || st?.configured === true,
        last4: key.last4 ?? st?.last4?.slice(-4) ?? null,
        keySource: key.configured ? storedKeySource(store.backend) : engineKeySource(st),
        enabled: manager.settings.enabled(id),
        baseUrl: manager.settings.baseUrl(id),
        health: st
          ? engineHealth(st.health)
          : record
            ? recordHealth(record)
            : { status: 'unknown', lastError: null, message: null, since: null },
      };
    }),
  );
  const builtIn = records.filter((r) => !isKeyId(r.id)).map(entryFromRecord);
  return [...remote, ...builtIn];
}

export function providersHandlers(deps: ProvidersDeps): DomainHandlers<'providers'> {
  const { manager, bus } = deps;
  const list = async (signal?: AbortSignal): Promise<ProvidersList> => {
    const records = await serviceProviders(await deps.session(), signal);
    if (!(await deps.activeIsLocal())) return { keysHeldBy: 'operator', providers: records.map(entryFromRecord) };
    // Asked at each listing: a key file's passphrase problem is shown as it is now.
    const store = await manager.keys.storeStatus();
    return {
      keysHeldBy: 'app',
      keyStore: store.message,
      keyStoreAvailable: store.available,
      providers: await localProviderEntries(manager, records),
    };
  };
  const changed = async (signal?: AbortSignal): Promise<ProvidersList> => {
    bus.publish({ type: 'providers.changed' });
    return list(signal);
  };
  const nameOf = async (id: ProviderKeyId): Promise<string> =>
    (await manager.engine()?.providerStatus())?.find((s) => s.id === id)?.name ?? id;
  return {
    list: (_input, ctx) => list(ctx.signal),
    setKey: async ({ id, key }, ctx) => {
      await manager.setKey(id, key);
      return changed(ctx.signal);
    },
    removeKey: async ({ id }, ctx) => {
      await manager.removeKey(id);
      return changed(ctx.signal);
    },
    testKey: async ({ id }) => {
      await deps.startEngine();
      return manager.testKey(id, await nameOf(id));
    },
    setEnabled: async ({ id, enabled }, ctx) => {
      await manager.setEnabled(id, enabled);
      return changed(ctx.signal);
    },
    setBaseUrl: async ({ id, baseUrl }, ctx) => {
      await manager.setBaseUrl(id, baseUrl);
      return changed(ctx.signal);
    },
    // docs/providers.md, "Refresh models": only the Local engine's catalog is the app's to sync.
    refreshModels: async (input) => {
      if (!(await deps.activeIsLocal())) throw ipcError('not_available', REMOTE_MODEL_LIST);
      const engine = await deps.catalogSync();
      const report = await engine
        .syncCatalog(input?.providers ? { providers: input.providers } : undefined)
        .catch((error: unknown) => {
          // The engine runs in another process (docs/architecture.md, "One engine per data folder"): say which.
          if (error instanceof EngineElsewhereError) throw ipcError('not_available', error.message);
          throw error;
        });
      // The models and the providers' offers may have changed: the picker and this panel reload.
      bus.publish({ type: 'providers.changed' });
      return report;
    },
  };
}
