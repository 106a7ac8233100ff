import { z } from 'zod';
import { optionalShape, withExtensions } from './extensions.ts';
import type { ExtensionNote } from './extensions.ts';

const perWindow = z.looseObject({ minute: z.number(), hour: z.number(), day: z.number() });
const perKind = z.looseObject({ image: z.number(), video: z.number() });

const USAGE_LIMITS = {
  rate: perWindow,
  concurrency: perKind,
  storageBytes: z.number(),
  retentionDays: z.number(),
  /** The retention new items get, in seconds (a test override can make it shorter than days). */
  retentionSeconds: z.number(),
};
const KeyCost = z.looseObject({
  keyId: z.string(),
  name: z.string(),
  cost: z.number(),
  requests: z.number(),
  /** Extension (docs/api.md): the key's last 4 characters, how a client knows its own key. */
  last4: z.string().optional(),
  /**
   * Extension (docs/api.md): the key's charges per UTC day (YYYY-MM-DD) over the last 62
   * days, from the items still stored (retention-deleted items drop out of it).
   */
  days: z.array(z.looseObject({ day: z.string(), cost: z.number(), items: z.number() })).optional(),
});
const USAGE_COST = { total: z.number(), byKey: z.array(KeyCost) };
const USAGE_COUNTS = {
  requests: perWindow,
  running: perKind,
  storageBytes: z.number(),
  /** Held for uploads not yet completed and for running generations (by their estimate). */
  reservedBytes: z.number(),
};
const USAGE_TOP = {
  tier: z.string(),
  /** Whether the calling key has a webhook signing secret (never the secret itself). */
  webhookSecret: z.looseObject({ exists: z.boolean() }),
};

/**
 * `GET /usage` as Clipdesk's service answers it (docs/api.md, "Usage"). `limits` are the account's
 * real ones: its tier's, with any the operator set for it (`clipdesk-service users set-limits`).
 * Cost is in US dollars.
 */
export const UsageResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({
    tier: USAGE_TOP.tier,
    limits: z.looseObject({ ...USAGE_LIMITS, retentionSeconds: USAGE_LIMITS.retentionSeconds.optional() }),
    usage: z.looseObject({
      ...USAGE_COUNTS,
      reservedBytes: USAGE_COUNTS.reservedBytes.optional(),
      cost: z.looseObject(USAGE_COST),
    }),
    webhookSecret: USAGE_TOP.webhookSecret.optional(),
  }),
});
export type UsageResponse = z.infer<typeof UsageResponse>;

/**
 * Usage as the client holds it from any v1 service: the spec shows none of its fields, so every
 * part is an extension, kept when it came intact (Settings and `clipdesk usage` show what there is).
 */
export const Usage = z.looseObject({
  ...optionalShape(USAGE_TOP),
  limits: z.looseObject(optionalShape(USAGE_LIMITS)).optional(),
  usage: z
    .looseObject({ ...optionalShape(USAGE_COUNTS), cost: z.looseObject(optionalShape(USAGE_COST)).optional() })
    .optional(),
});
export type Usage = z.infer<typeof Usage>;

/** The spec's layer of `GET /usage`: an object under `result` (its fields are not shown). */
export const SpecUsageResponse = z.looseObject({ success: z.literal(true), result: z.looseObject({}) });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The client's usage from `result`, each part parsed on its own. */
export function readUsage(result: Record<string, unknown>, note: ExtensionNote): Usage {
  const out: Record<string, unknown> = withExtensions(result, USAGE_TOP, 'result', note);
  const part = (name: string, shape: Parameters<typeof withExtensions>[1], raw: unknown): unknown => {
    if (raw === undefined) return undefined;
    if (!isObject(raw)) {
      note(`ignored result.${name} (not an object): the service's extension does not match Clipdesk's`);
      return undefined;
    }
    return withExtensions(raw, shape, `result.${name}`, note);
  };
  const limits = part('limits', USAGE_LIMITS, result['limits']);
  const counts = part('usage', USAGE_COUNTS, result['usage']) as Record<string, unknown> | undefined;
  if (counts) {
    const cost = part('usage.cost', USAGE_COST, counts['cost']);
    if (cost === undefined) delete counts['cost'];
    else counts['cost'] = cost;
  }
  if (limits === undefined) delete out['limits'];
  else out['limits'] = limits;
  if (counts === undefined) delete out['usage'];
  else out['usage'] = counts;
  return out;
}

/** `POST /media/:id/retain` body: extend by days, or keep for good. */
export const RetainRequest = z.object({
  days: z.number().int().min(1).max(3650).optional(),
  forever: z.boolean().optional(),
});
export type RetainRequest = z.infer<typeof RetainRequest>;

/** Records behind keys and users (the service stores only hashes of keys). */
export const PERMISSIONS = ['read', 'generate', 'upload'] as const;
export const Permission = z.enum(PERMISSIONS);
export type Permission = z.infer<typeof Permission>;

export const ApiKeyRecord = z.object({
  id: z.string(),
  user: z.string(),
  name: z.string(),
  permissions: z.array(Permission),
  createdAt: z.string(),
  revokedAt: z.string().nullable(),
  last4: z.string(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

/** Rate-limit headers (spec, "Rate limit headers"). Reset is a Unix timestamp in seconds. */
export const RATE_LIMIT_HEADERS = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  reset: 'x-ratelimit-reset',
} as const;
