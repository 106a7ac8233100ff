import type { Db } from '../storage/db.ts';

/**
 * Records the owner's download: the item is then exempt from retention deletion (the spec's
 * "deleted unless the owner downloaded them"). The first download's time is kept.
 */
export async function markDownloaded(db: Db, now: number, mediaId: string): Promise<void> {
  await db.run('UPDATE media SET downloaded_at = ? WHERE id = ? AND downloaded_at IS NULL', now, mediaId);
}
