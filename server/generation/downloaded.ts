import type { ServiceContext } from '../context.ts';

/**
 * Records the owner's download: the item is then exempt from retention deletion (the spec's
 * "deleted unless the owner downloaded them"). The first download's time is kept.
 */
export async function markDownloaded(ctx: Pick<ServiceContext, 'db' | 'clock'>, mediaId: string): Promise<void> {
  await ctx.db.run(
    'UPDATE media SET downloaded_at = ? WHERE id = ? AND downloaded_at IS NULL',
    ctx.clock.now(),
    mediaId,
  );
}
