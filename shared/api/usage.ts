import { z } from 'zod';

const perWindow = z.looseObject({ minute: z.number(), hour: z.number(), day: z.number() });
const perKind = z.looseObject({ image: z.number(), video: z.number() });

/**
 * `GET /usage` (docs/api.md, "Usage"). `limits` are the account's real ones: its tier's, with any the
 * operator set for it (`clipdesk-service users set-limits`). Cost is in US dollars.
 */
export const UsageResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({
    tier: z.string(),
    limits: z.looseObject({
      rate: perWindow,
      concurrency: perKind,
      storageBytes: z.number(),
      retentionDays: z.number(),
      /** The retention new items get, in seconds (a test override can make it shorter than days). */
      retentionSeconds: z.number().optional(),
    }),
    usage: z.looseObject({
      requests: perWindow,
      running: perKind,
      storageBytes: z.number(),
      /** Held for uploads not yet completed and for running generations (by their estimate). */
      reservedBytes: z.number().optional(),
      cost: z.looseObject({
        total: z.number(),
        byKey: z.array(
          z.looseObject({
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
          }),
        ),
      }),
    }),
    /** Whether the calling key has a webhook signing secret (never the secret itself). */
    webhookSecret: z.looseObject({ exists: z.boolean() }).optional(),
  }),
});
export type UsageResponse = z.infer<typeof UsageResponse>;
export type Usage = UsageResponse['result'];

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
