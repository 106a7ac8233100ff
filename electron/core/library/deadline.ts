import type { MediaItem } from '../../../shared/api/index.ts';

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
