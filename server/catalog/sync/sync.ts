import { SYNCED_PROVIDERS } from '../../../shared/api/index.ts';
import type { CatalogSyncReport, ProviderSyncResult, SyncedProvider } from '../../../shared/api/index.ts';
import { builtinCatalog, mergeOperatorCatalog, parseOperatorCatalog } from '../../providers/catalog-file/load.ts';
import { operatorCatalogStore } from '../../providers/catalog-file/operator-store.ts';
import { OperatorCatalogFile } from '../../providers/catalog-file/schema.ts';
import { PROVIDER_ENV_KEYS } from '../../providers/provider-keys.ts';
import { redact } from '../../providers/remote/http.ts';
import type { Sql } from '../../storage/sql/types.ts';
import { buildOperatorDocument } from './build.ts';
import type { OperatorDocument } from './build.ts';
import { FAL_PLATFORM_URL, FAL_PLATFORM_URL_ENV, readFalListing } from './fal-listing.ts';
import { DEFAULT_LISTING_LIMITS, ListingError } from './fetch-json.ts';
import type { ListingLimits } from './fetch-json.ts';
import type { ProviderListing } from './listing.ts';
import { providerModelMap } from './mapping.ts';
import { readReplicateListing, REPLICATE_API_URL } from './replicate-listing.ts';

/**
 * One catalog sync (docs/providers.md, "Syncing the catalog"), the same for `clipdesk-service
 * catalog sync`, the service's schedule and the app's "Refresh models": read each provider's
 * listing with its configured key, build the operator catalog from them over the last one, check
 * it as the service will load it, and write it atomically (not on a dry run, and not when no
 * provider could be read).
 */
export interface CatalogSyncOptions {
  dataDir: string;
  /** PostgreSQL: the catalog the nodes share lives in the database. */
  db?: Sql;
  /** Default: every provider with a listing API. */
  providers?: readonly SyncedProvider[];
  /** The provider's key and API base (the service's key store); undefined without a key. */
  credentials(id: SyncedProvider): { apiKey: string; baseUrl?: string } | undefined;
  /** Where `CLIPDESK_FAL_PLATFORM_URL` is read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  dryRun?: boolean;
  now?: Date;
  limits?: Partial<ListingLimits>;
  signal?: AbortSignal;
}

export async function syncCatalog(options: CatalogSyncOptions): Promise<CatalogSyncReport> {
  const now = options.now ?? new Date();
  const limits = { ...DEFAULT_LISTING_LIMITS, ...options.limits };
  const falPlatformUrl = (options.env ?? process.env)[FAL_PLATFORM_URL_ENV]?.trim() || FAL_PLATFORM_URL;
  const wanted = [...new Set(options.providers ?? SYNCED_PROVIDERS)];
  const listings = await Promise.all(wanted.map((provider) => readProvider(provider, options, limits, falPlatformUrl)));
  const store = operatorCatalogStore(options.dataDir, options.db);
  const previous = await store.read();
  const builtin = builtinCatalog();
  // The last catalog must itself load: a sync builds on it, and never hides a broken one.
  if (previous) mergeOperatorCatalog(builtin, parseOperatorCatalog(previous.text, previous.where));
  const read = listings.flatMap((l) => (l.listing ? [{ provider: l.provider, listing: l.listing }] : []));
  const lastDocument = previous
    ? (OperatorCatalogFile.parse(JSON.parse(previous.text)) satisfies OperatorDocument)
    : undefined;
  const { document, counts } = buildOperatorDocument({
    builtin,
    previous: lastDocument,
    read,
    map: providerModelMap(),
    day: now.toISOString().slice(0, 10),
    falPlatformUrl,
  });
  const text = `${JSON.stringify(document, null, 2)}\n`;
  const merged = mergeOperatorCatalog(builtin, parseOperatorCatalog(text, 'the synced catalog'));
  const written = read.length > 0 && options.dryRun !== true;
  if (written) await store.write(text);
  const results: ProviderSyncResult[] = listings.map((l) =>
    l.listing
      ? {
          provider: l.provider,
          ok: true,
          models: l.listing.models.length,
          prices: l.listing.prices,
          skipped: l.listing.skipped + (counts[l.provider]?.unfit ?? 0) + (counts[l.provider]?.absurd ?? 0),
          unpriced: counts[l.provider]?.unpriced ?? 0,
          unpricedModels: counts[l.provider]?.unpricedModels ?? [],
        }
      : { provider: l.provider, ok: false, models: 0, prices: 0, error: l.error ?? 'not read' },
  );
  return {
    at: now.toISOString(),
    written,
    keptLast: results.some((r) => !r.ok),
    providers: results,
    models: {
      video: merged.models.filter((m) => m.media === 'video').length,
      image: merged.models.filter((m) => m.media === 'image').length,
    },
    where: store.where,
  };
}

async function readProvider(
  provider: SyncedProvider,
  options: CatalogSyncOptions,
  limits: ListingLimits,
  falPlatformUrl: string,
): Promise<{ provider: SyncedProvider; listing?: ProviderListing; error?: string }> {
  const credentials = options.credentials(provider);
  if (!credentials) return { provider, error: `no key: ${PROVIDER_ENV_KEYS[provider]} is not set and none is stored` };
  try {
    const common = { apiKey: credentials.apiKey, limits, ...(options.signal ? { signal: options.signal } : {}) };
    const listing =
      provider === 'fal'
        ? await readFalListing({ ...common, baseUrl: falPlatformUrl })
        : await readReplicateListing({ ...common, baseUrl: credentials.baseUrl ?? REPLICATE_API_URL });
    return { provider, listing };
  } catch (error) {
    const message = error instanceof ListingError ? error.message : `${provider}: ${String(error)}`;
    return { provider, error: redact(message.replace(/\s+/g, ' '), credentials.apiKey) };
  }
}
