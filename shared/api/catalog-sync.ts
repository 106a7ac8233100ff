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
  /**
   * Listed models whose listed price the catalog could not take, with the unit the provider gave:
   * left out (`kept: 'none'`), or kept at the built-in price rule (`kept: 'builtin'`) because the
   * unit is not one the catalog reads or one figure cannot say what the built-in table says.
   */
  unpricedModels?: UnpricedModel[];
}

export interface UnpricedModel {
  /** The catalog model id. */
  model: string;
  /** The provider's endpoint (fal) or model (Replicate) the price was listed for. */
  endpoint: string;
  /** The unit as the provider lists it (`units`, `5 seconds`); null when it lists no price. */
  unit: string | null;
  kept: 'builtin' | 'none';
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
