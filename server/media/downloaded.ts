import type { ServiceContext } from '../context.ts';
import { sql } from '../storage/db.ts';

/**
 * Records the owner's download: the item is then exempt from retention deletion (the spec's
 * "deleted unless the owner downloaded them"). The first download's time is kept.
 */
export function markDownloaded(ctx: ServiceContext, mediaId: string): void {
  sql(ctx.db, 'UPDATE media SET downloaded_at = ? WHERE id = ? AND downloaded_at IS NULL').run(
    ctx.clock.now(),
    mediaId,
  );
}
