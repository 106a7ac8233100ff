import { z } from 'zod';
import { ModelRecord } from '../../api/model-records.ts';
import { MediaKind } from '../../api/media.ts';
import { Usage } from './usage-shape.ts';

export const ModelsListInput = z.object({ media: MediaKind.optional() }).optional();
export const ModelsList = z.object({ models: z.array(ModelRecord) });

/** The rate-limit state from the last response's `X-RateLimit-*` headers (null: not seen yet). */
export const RateLimitState = z.object({
  limit: z.number().nullable(),
  remaining: z.number().nullable(),
  /** Unix seconds. */
  reset: z.number().nullable(),
  /** Milliseconds until a request may be sent without a 429; 0 when it may be sent now. */
  waitMs: z.number().nonnegative(),
  tier: z.string().nullable(),
});
export type RateLimitState = z.infer<typeof RateLimitState>;

export const UsageState = z.object({ usage: Usage, rateLimit: RateLimitState });
export type UsageState = z.infer<typeof UsageState>;
