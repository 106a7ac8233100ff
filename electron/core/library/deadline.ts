import { TIERS, type MediaItem, type TierName } from '../../../shared/api/index.ts';

const DAY_MS = 86_400_000;

/**
 * When retention deletes an item on the service: its own `expiresAt` when it sends one, null when
 * it says the item is exempt (expiresAt null, or already downloaded), else createdAt plus the
 * tier's retention. Pure.
 */
export function retentionDeadline(
  item: Pick<MediaItem, 'createdAt' | 'expiresAt' | 'downloadedAt'>,
  retentionDays: number,
): number | null {
  if (item.expiresAt === null) return null;
  if (typeof item.expiresAt === 'string') {
    const at = Date.parse(item.expiresAt);
    if (Number.isFinite(at)) return at;
  }
  if (item.downloadedAt) return null;
  const created = Date.parse(item.createdAt);
  if (!Number.isFinite(created)) return null;
  return created + retentionDays * DAY_MS;
}

/**
 * The account's retention in days, for items whose service sends no `expiresAt`: the account's own
 * when `/usage` has said it (custom limits), else its tier's in the tier table, else the Free
 * tier's (the shortest, so nothing is kept past a deadline the app does not know). Pure.
 */
export function accountRetentionDays(account: { retentionDays: number | null; tier: string | null }): number {
  if (account.retentionDays !== null) return account.retentionDays;
  const tier = account.tier as TierName | null;
  return tier && Object.hasOwn(TIERS, tier) ? TIERS[tier].retentionDays : TIERS.free.retentionDays;
}
