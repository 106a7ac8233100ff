import { SYNCED_PROVIDERS } from '../../../shared/api/index.ts';
import type { CatalogSyncReport, SyncedProvider } from '../../../shared/api/index.ts';
import type { Logger } from '../../logger.ts';
import { operatorCatalogStore } from '../../providers/catalog-file/operator-store.ts';
import type { ProviderSettings } from '../../providers/provider-keys.ts';
import { takeLease } from '../../storage/leases.ts';
import type { SqlDatabase } from '../../storage/sql/types.ts';
import { syncCatalog } from './sync.ts';

/**
 * The catalog sync inside a running service (docs/providers.md, "Syncing the catalog"):
 * - `sync()` (the app's "Refresh models") runs one sync now, then reloads the catalog;
 * - a schedule (`serve --catalog-sync-interval HOURS`) runs one every interval, the first one an
 *   interval after start (never at start: a start never waits on a provider), on one node at a
 *   time — a lease held for the whole interval, so the other nodes skip their rounds;
 * - every `checkMs` the operator catalog's version is looked at (a file's identity and time, or
 *   the database row's `updated_at`), so a sync by the CLI or by another node is loaded here too.
 * A catalog that no longer loads is reported and the one in use kept.
 */
export const CATALOG_SYNC_LEASE = 'catalog-sync';
export const DEFAULT_CATALOG_SYNC_HOURS = 24;
/** How often a running service looks whether the operator catalog changed. */
export const DEFAULT_CATALOG_CHECK_MS = 5_000;

export interface ServiceCatalogSync {
  sync(options?: { providers?: SyncedProvider[] }): Promise<CatalogSyncReport>;
  stop(): Promise<void>;
}

export interface ServiceCatalogSyncOptions {
  dataDir: string;
  db: SqlDatabase;
  settings: ProviderSettings;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  node: string;
  /** Hours between scheduled syncs; 0 turns the schedule off. */
  intervalHours: number;
  checkMs: number;
  /** Loads the operator catalog again into the running catalog (throws CatalogFileError). */
  reload(): Promise<void>;
}

export async function startServiceCatalogSync(options: ServiceCatalogSyncOptions): Promise<ServiceCatalogSync> {
  const { db, logger } = options;
  const store = operatorCatalogStore(options.dataDir, db.dialect === 'postgres' ? db : undefined);
  let version = await store.version();
  let running: Promise<CatalogSyncReport> | null = null;
  let checking: Promise<void> | null = null;

  const reloadIfChanged = async (): Promise<void> => {
    const now = await store.version();
    if (now === version) return;
    version = now;
    try {
      await options.reload();
      logger.info(`the operator catalog changed (${store.where}): reloaded`);
    } catch (error) {
      logger.warn(`the operator catalog changed but does not load; the one in use is kept: ${String(error)}`);
    }
  };

  const sync = (requested?: { providers?: SyncedProvider[] }): Promise<CatalogSyncReport> => {
    running ??= (async () => {
      const providers = requested?.providers ?? SYNCED_PROVIDERS.filter((id) => options.settings.configured(id));
      const report = await syncCatalog({
        dataDir: options.dataDir,
        ...(db.dialect === 'postgres' ? { db } : {}),
        providers,
        credentials: (id) => options.settings.adapterSettings(id),
        env: options.env,
      });
      if (report.written) await reloadIfChanged();
      return report;
    })().finally(() => {
      running = null;
    });
    return running;
  };

  const check = setInterval(() => {
    checking ??= reloadIfChanged()
      .catch((error: unknown) => logger.warn(`could not look at the operator catalog: ${String(error)}`))
      .finally(() => {
        checking = null;
      });
  }, options.checkMs);
  check.unref();

  const intervalMs = options.intervalHours * 3_600_000;
  const schedule =
    intervalMs > 0
      ? setInterval(() => {
          void scheduledRound(options, intervalMs, sync);
        }, intervalMs)
      : null;
  schedule?.unref();

  return {
    sync,
    async stop() {
      clearInterval(check);
      if (schedule) clearInterval(schedule);
      await checking;
      await running?.catch(() => undefined);
    },
  };
}

/** One scheduled round: only with a configured provider, and only on the node holding the lease. */
async function scheduledRound(
  options: ServiceCatalogSyncOptions,
  intervalMs: number,
  sync: ServiceCatalogSync['sync'],
): Promise<void> {
  const { logger } = options;
  try {
    if (!SYNCED_PROVIDERS.some((id) => options.settings.configured(id))) return;
    // Held for the interval: the node that synced syncs again next time; another takes over once it lapses.
    if (!(await takeLease(options.db, CATALOG_SYNC_LEASE, options.node, intervalMs, Date.now()))) return;
    const report = await sync();
    const lines = report.providers.map((p) =>
      p.ok ? `${p.provider}: ${p.models} models, ${p.prices} prices` : `${p.provider}: not read (${p.error ?? ''})`,
    );
    const outcome = report.written ? 'written' : 'nothing written';
    logger.info(`scheduled catalog sync: ${lines.join('; ')}; ${outcome}`);
  } catch (error) {
    logger.warn(`scheduled catalog sync failed; the catalog in use is kept: ${String(error)}`);
  }
}
