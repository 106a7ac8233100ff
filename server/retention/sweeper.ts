import type { ServiceContext } from '../context.ts';
import { RECEIVED_UPLOAD_KEEP_MS } from '../limits/storage-quota.ts';
import { IDEMPOTENCY_TTL_MS } from '../media/idempotency.ts';
import { removeItemFiles } from '../media/store.ts';
import { uploadKey } from '../storage/layout.ts';

/**
 * Retention (spec, "Storage by tier"): items past their deadline are deleted, files and row,
 * unless the owner downloaded them or extended retention. The row goes first (in a transaction),
 * so no listed item ever points at deleted files; a crash (or a store that cannot be reached)
 * before the files go leaves orphaned files that startup (disk) or `fsck` removes. Expired upload
 * tickets and idempotency records go too. Files go through the blob store.
 */
export async function sweepRetention(ctx: ServiceContext): Promise<number> {
  const now = ctx.clock.now();
  const expired = await ctx.db.all<{
    id: string;
  }>('SELECT id FROM media WHERE expires_at IS NOT NULL AND expires_at <= ? AND downloaded_at IS NULL', now);
  const deleted: string[] = [];
  await ctx.db.transaction(async (tx) => {
    for (const { id } of expired) {
      // Re-checked inside the transaction: a download may have landed since the select.
      const result = await tx.run(
        'DELETE FROM media WHERE id = ? AND expires_at <= ? AND downloaded_at IS NULL',
        id,
        now,
      );
      if (Number(result.changes) > 0) deleted.push(id);
    }
  });
  for (const id of deleted) await removeItemFiles(ctx, id);

  // A received upload keeps a day past its URL's expiry for the client to complete it (and holds
  // its quota reservation that long).
  const stale = await ctx.db.all<{ id: string }>(
    "SELECT id FROM uploads WHERE (state = 'pending' AND expires_at <= ?) OR (state = 'received' AND expires_at <= ?)",
    now,
    now - RECEIVED_UPLOAD_KEEP_MS,
  );
  for (const { id } of stale) {
    await ctx.db.run('DELETE FROM uploads WHERE id = ?', id);
    await ctx.blobs
      .delete(uploadKey(id))
      .catch(() => ctx.logger.warn(`could not remove the received file of ${id} (fsck lists it)`));
  }
  await ctx.db.run('DELETE FROM idempotency WHERE created_at <= ?', now - IDEMPOTENCY_TTL_MS);
  if (deleted.length > 0) ctx.logger.info(`retention removed ${deleted.length} item(s)`);
  return deleted.length;
}
