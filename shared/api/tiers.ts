import { z } from 'zod';
import type { RateWindow } from './constants.ts';

/**
 * The spec's tier tables as data, so the service, the client and the UI read one source.
 * The spec says "custom" for Enterprise; the Local engine gives it the generous values below.
 */
export const TIER_NAMES = ['free', 'basic', 'pro', 'enterprise'] as const;
export const TierName = z.enum(TIER_NAMES);
export type TierName = z.infer<typeof TierName>;

export { CONTENT_LIMITS, RATE_WINDOWS, type RateWindow } from './constants.ts';
export const RATE_WINDOW_SECONDS: Readonly<Record<RateWindow, number>> = {
  minute: 60,
  hour: 3_600,
  day: 86_400,
};

import type { MediaKind } from './media.ts';

export interface TierLimits {
  /** Requests per window, over every endpoint. */
  rate: Record<RateWindow, number>;
  /** Generations running at once, per media kind. */
  concurrency: Record<MediaKind, number>;
  /** Bytes of stored media (MB = 10^6 bytes, as in the spec's storage table). */
  storageBytes: number;
  retentionDays: number;
}

const GB = 1_000_000_000;

export const TIERS: Readonly<Record<TierName, TierLimits>> = {
  free: {
    rate: { minute: 10, hour: 100, day: 1_000 },
    concurrency: { image: 2, video: 1 },
    storageBytes: 1 * GB,
    retentionDays: 7,
  },
  basic: {
    rate: { minute: 30, hour: 500, day: 5_000 },
    concurrency: { image: 5, video: 2 },
    storageBytes: 10 * GB,
    retentionDays: 30,
  },
  pro: {
    rate: { minute: 100, hour: 2_000, day: 20_000 },
    concurrency: { image: 20, video: 5 },
    storageBytes: 100 * GB,
    retentionDays: 90,
  },
  enterprise: {
    rate: { minute: 1_000, hour: 20_000, day: 200_000 },
    concurrency: { image: 50, video: 20 },
    storageBytes: 1_000 * GB,
    retentionDays: 365,
  },
};

/** Concurrency a client assumes when it does not know the tier. */
export const UNKNOWN_TIER_CONCURRENCY: Readonly<Record<MediaKind, number>> = { image: 1, video: 1 };

export const MB = 1_000_000;
