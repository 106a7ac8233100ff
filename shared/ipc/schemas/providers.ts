import { z } from 'zod';
import { SYNCED_PROVIDERS, type CatalogSyncReport } from '../../api/catalog-sync.ts';
import { providerBaseUrlProblem, providerKeyProblem } from '../provider-rules.ts';

/**
 * Settings → Providers: the AI providers' keys, switches and base URLs. Provider keys belong to
 * the service that calls the providers: these routes configure the embedded Local engine; with a
 * remote profile the list is that service's `/providers`, read-only (its operator holds the keys).
 *
 * The ids are the service's REMOTE_PROVIDER_IDS (server/providers/remote/contract.ts); shared/ may
 * not import the service, so electron/core/providers checks at compile time that both lists agree.
 */
export const PROVIDER_KEY_IDS = ['fal', 'replicate', 'google', 'runway', 'luma', 'openai'] as const;
export const ProviderKeyId = z.enum(PROVIDER_KEY_IDS, {
  error: (issue) => `unknown provider ${JSON.stringify(issue.input)}; one of ${PROVIDER_KEY_IDS.join(', ')}`,
});
export type ProviderKeyId = z.infer<typeof ProviderKeyId>;

export { PROVIDER_KEY_MAX, PROVIDER_KEY_MIN } from '../../api/provider-keys.ts';
export { providerBaseUrlProblem, providerKeyProblem, REMOTE_MODEL_LIST } from '../provider-rules.ts';

/** Write-only: no route ever returns it. */
export const ProviderKey = z.string().superRefine((key, ctx) => {
  const problem = providerKeyProblem(key);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const ProviderBaseUrl = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .superRefine((url, ctx) => {
    const problem = providerBaseUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  // One spelling per address: `http://h:1/` and `http://h:1` are the same setting.
  .transform((url) => url.replace(/\/+$/, ''));

export const ProviderIdInput = z.object({ id: ProviderKeyId });
export const ProviderSetKeyInput = z.object({ id: ProviderKeyId, key: ProviderKey });
export const ProviderSetEnabledInput = z.object({ id: ProviderKeyId, enabled: z.boolean() });
/** null: back to the SDK's own address. */
export const ProviderSetBaseUrlInput = z.object({ id: ProviderKeyId, baseUrl: ProviderBaseUrl.nullable() });

export const ProviderHealthView = z.object({
  /** `unknown`: the service does not report it (an older service, or not started yet). */
  status: z.enum(['ok', 'unhealthy', 'unknown']),
  /** The class of the last error (`auth`, `rate_limited`, `server` …). */
  lastError: z.string().nullable(),
  /** Its message: names the provider, never a key. */
  message: z.string().nullable(),
  /** When the provider turned unhealthy (ISO 8601). */
  since: z.string().nullable(),
});
export type ProviderHealthView = z.infer<typeof ProviderHealthView>;

/**
 * One provider as Settings shows it: the service's provider record (id, slug, name, status,
 * models, features, description) plus what the app knows of its key and settings. Never the key:
 * `last4` only.
 */
export const ProviderEntry = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.string(),
  models: z.array(z.string()),
  features: z.array(z.string()),
  /** `local`: a built-in procedural renderer (no key). `remote`: an AI provider reached with a key. */
  kind: z.enum(['local', 'remote']),
  configured: z.boolean(),
  last4: z.string().max(4).nullable(),
  /**
   * Where the key in use comes from, in the user's words: 'keychain', 'key file', 'environment
   * (FAL_KEY)', 'file (provider-keys.json)'. Absent from an older main or a remote profile.
   */
  keySource: z.string().max(120).nullable().optional(),
  enabled: z.boolean(),
  /** The overridden API base URL; null: the SDK's own. */
  baseUrl: z.string().nullable(),
  health: ProviderHealthView,
});
export type ProviderEntry = z.infer<typeof ProviderEntry>;

export const ProvidersList = z.object({
  /** `app`: the Local engine's, configured here. `operator`: a remote service's, read-only. */
  keysHeldBy: z.enum(['app', 'operator']),
  /**
   * Where the app keeps the keys it stores, in one line (the OS keychain, the key file and how it
   * protects them, or why none can be stored). Absent for a remote profile or from an older main.
   */
  keyStore: z.string().max(600).optional(),
  /**
   * False when the keys already stored cannot be read now (a key file whose passphrase is missing
   * or wrong): `keyStore` then says why and how to fix it, and Settings shows it as an error.
   */
  keyStoreAvailable: z.boolean().optional(),
  providers: z.array(ProviderEntry),
});
export type ProvidersList = z.infer<typeof ProvidersList>;

/** `message` says plainly whether the key works, in the user's terms. */
export const ProviderTestResult = z.object({ ok: z.boolean(), message: z.string() });
export type ProviderTestResult = z.infer<typeof ProviderTestResult>;

/**
 * Settings → Providers → "Refresh models": the Local engine reads fal's and Replicate's own model
 * listings (docs/providers.md). No providers: every provider that has a listing.
 */
export const SyncedProviderId = z.enum(SYNCED_PROVIDERS);
export const RefreshModelsInput = z
  .strictObject({ providers: z.array(SyncedProviderId).min(1).max(SYNCED_PROVIDERS.length).optional() })
  .optional();

const count = z.number().int().nonnegative();
/** The service's CatalogSyncReport, checked on its way to the renderer. */
export const RefreshModelsResult = z.object({
  at: z.string(),
  written: z.boolean(),
  keptLast: z.boolean(),
  providers: z.array(
    z.object({
      provider: SyncedProviderId,
      ok: z.boolean(),
      models: count,
      prices: count,
      error: z.string().max(2000).optional(),
    }),
  ),
  models: z.object({ video: count, image: count }),
});
export type RefreshModelsResult = z.infer<typeof RefreshModelsResult>;
// The report's schema must be the service's type: a field added on one side only fails to compile here.
const sameReport: [CatalogSyncReport] extends [RefreshModelsResult]
  ? [RefreshModelsResult] extends [CatalogSyncReport]
    ? true
    : false
  : false = true;
void sameReport;
