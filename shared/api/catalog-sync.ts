/**
 * What a catalog sync reports (docs/providers.md, "Syncing the catalog"): the service's
 * `catalog sync` command, its schedule and the app's "Refresh models" all answer with it.
 */
export const SYNCED_PROVIDERS = ['fal', 'replicate'] as const;
export type SyncedProvider = (typeof SYNCED_PROVIDERS)[number];

export interface ProviderSyncResult {
  provider: SyncedProvider;
  /** False when its listing could not be read (unreachable, refused key, malformed answer). */
  ok: boolean;
  /** Models read from its listing. */
  models: number;
  /** Prices read from its price listing (verified and dated). */
  prices: number;
  /** Why it failed, in one line; never carries a key. */
  error?: string;
  /** Listed models left out: malformed, or not fitting the catalog's rules. */
  skipped?: number;
  /** Listed models left out for want of a price (none from the provider, none kept by hand). */
  unpriced?: number;
}

export interface CatalogSyncReport {
  /** When the sync ran (ISO 8601). */
  at: string;
  /** Whether the operator catalog was replaced (false on a dry run or when nothing could be read). */
  written: boolean;
  /** True when some provider could not be read and its part of the last catalog was kept. */
  keptLast: boolean;
  providers: ProviderSyncResult[];
  /** Models in the resulting catalog, by media. */
  models: { video: number; image: number };
  /** Where the catalog is kept: the file's path, or the database. */
  where?: string;
}
