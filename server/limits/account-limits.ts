import type { TierLimits, TierName } from '../../shared/api/index.ts';
import { TIERS } from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';

/**
 * An account's real limits: its tier's table (shared/api/tiers.ts) with the per-account values
 * an operator set by `clipdesk-service users set-limits` (the spec's Enterprise "custom") laid
 * over it. Any tier can carry them. They live in `user_limits`, one nullable column per limit
 * (NULL keeps the tier's value), and are read with the key on every request (verifyKey joins
 * them), so a change takes effect on the next request without a restart.
 */
export interface LimitOverrides {
  rpm?: number;
  rph?: number;
  rpd?: number;
  images?: number;
  videos?: number;
  storageBytes?: number;
  retentionDays?: number;
}

/** The overrides, in the CLI's flag order, with their flags and `user_limits` columns. */
export const LIMIT_FIELDS = [
  { key: 'rpm', flag: 'rpm', column: 'rpm', what: 'requests per minute' },
  { key: 'rph', flag: 'rph', column: 'rph', what: 'requests per hour' },
  { key: 'rpd', flag: 'rpd', column: 'rpd', what: 'requests per day' },
  { key: 'images', flag: 'images', column: 'images', what: 'concurrent image generations' },
  { key: 'videos', flag: 'videos', column: 'videos', what: 'concurrent video generations' },
  { key: 'storageBytes', flag: 'storage', column: 'storage_bytes', what: 'bytes of storage' },
  { key: 'retentionDays', flag: 'retention', column: 'retention_days', what: 'days of retention' },
] as const satisfies ReadonlyArray<{ key: keyof LimitOverrides; flag: string; column: string; what: string }>;

/** `user_limits` columns as verifyKey selects them (NULL when the account has no override). */
export interface LimitColumns {
  rpm: number | null;
  rph: number | null;
  rpd: number | null;
  images: number | null;
  videos: number | null;
  storage_bytes: number | null;
  retention_days: number | null;
}

/** For a query joining `user_limits l`: the columns LimitColumns reads. */
export const LIMIT_COLUMNS_SQL = LIMIT_FIELDS.map((f) => `l.${f.column}`).join(', ');

/** The tier's limits with the account's overrides applied. */
export function accountLimits(tier: TierName, row: LimitColumns | null | undefined): TierLimits {
  const base = TIERS[tier];
  if (!row) return base;
  return {
    rate: { minute: row.rpm ?? base.rate.minute, hour: row.rph ?? base.rate.hour, day: row.rpd ?? base.rate.day },
    concurrency: { image: row.images ?? base.concurrency.image, video: row.videos ?? base.concurrency.video },
    storageBytes: row.storage_bytes ?? base.storageBytes,
    retentionDays: row.retention_days ?? base.retentionDays,
  };
}

/** Retention beyond a century is "keep for good", which `POST /media/:id/retain` already offers. */
const MAX_RETENTION_DAYS = 36_500;

/** A limit must be a positive whole number: zero would lock the account out, use a revoke instead. */
export function parseLimitValue(flag: string, text: string): number {
  const value = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`--${flag} must be a positive whole number, not '${text}'`);
  }
  if (flag === 'retention' && value > MAX_RETENTION_DAYS) {
    throw new RangeError(`--retention must be at most ${MAX_RETENTION_DAYS} days, not ${value}`);
  }
  return value;
}

/** Sets (merges) an existing user's overrides; returns false when there is no such user. */
export async function setAccountLimits(db: Db, user: string, overrides: LimitOverrides): Promise<boolean> {
  if (!(await db.get('SELECT 1 AS x FROM users WHERE id = ?', user))) return false;
  const values = LIMIT_FIELDS.map((f) => overrides[f.key] ?? null);
  // COALESCE keeps a limit that this call does not name.
  await db.run(
    `INSERT INTO user_limits (user_id, ${LIMIT_FIELDS.map((f) => f.column).join(', ')})
     VALUES (?, ${LIMIT_FIELDS.map(() => '?').join(', ')})
     ON CONFLICT(user_id) DO UPDATE SET ${LIMIT_FIELDS.map((f) => `${f.column} = COALESCE(excluded.${f.column}, user_limits.${f.column})`).join(', ')}`,
    user,
    ...values,
  );
  return true;
}

/** The account's limits as the service applies them, or null when there is no such user. */
export async function readAccountLimits(db: Db, user: string): Promise<{ tier: TierName; limits: TierLimits } | null> {
  const row = await db.get<LimitColumns & { tier: TierName }>(
    `SELECT u.tier, ${LIMIT_COLUMNS_SQL} FROM users u LEFT JOIN user_limits l ON l.user_id = u.id WHERE u.id = ?`,
    user,
  );
  if (!row) return null;
  return { tier: row.tier, limits: accountLimits(row.tier, row) };
}
