import type { GenerationServices } from '../generation/services.ts';
import { RECEIVED_UPLOAD_KEEP_MS } from '../limits/storage-quota.ts';
import { IDEMPOTENCY_TTL_MS } from '../generation/idempotency.ts';
import { removeItemFiles } from '../generation/store.ts';
import { deleteFinishedGenerations } from '../storage/generations.ts';
import { uploadPrefix } from '../storage/layout.ts';
import { leaseHolder, releaseLease, renewLease, takeLease } from '../storage/leases.ts';
import { sweepUploadClaims } from '../uploads/receive-claim.ts';

/** The lease (storage/leases.ts) a node holds while it sweeps: one node at a time sweeps. */
export const SWEEP_LEASE = 'retention-sweep';
/**
 * How long a sweeping node's lease lasts past its last renewal (renewed every third of it while the
 * sweep runs, let go when it ends). A node killed mid-sweep holds the sweep this long at most: two
 * rounds of the default one-minute timer.
 */
export const SWEEP_LEASE_MS = 120_000;

export interface SweeperOptions {
  /** This node's id in the lease. */
  node: string;
  /** Default SWEEP_LEASE_MS. */
  leaseMs?: number;
  /** Wall clock for the lease; default Date.now. */
  now?: () => number;
}

/**
 * Retention on exactly one node at a time: a round first takes the sweep's lease in the database; a
 * node that finds another holding it skips the round (resolving 0) and says so in the log once,
 * until it sweeps again. While it sweeps, the node renews the lease; should it lose it anyway (a
 * stall longer than the lease), it stops between deletions. Every round lets go of the lease at its
 * end, so any node may take the next. On one node (SQLite) the lease is one upsert per round.
 */
export function createRetentionSweeper(ctx: GenerationServices, options: SweeperOptions): () => Promise<number> {
  const leaseMs = options.leaseMs ?? SWEEP_LEASE_MS;
  const now = options.now ?? Date.now;
  let skipping = false;
  return async () => {
    if (!(await takeLease(ctx.db, SWEEP_LEASE, options.node, leaseMs, now()))) {
      if (!skipping) {
        const holder = await leaseHolder(ctx.db, SWEEP_LEASE, now()).catch(() => null);
        ctx.logger.info(
          `retention: another node${holder === null ? '' : ` (${holder})`} is sweeping; this node skips its rounds while it does`,
        );
        skipping = true;
      }
      return 0;
    }
    if (skipping) ctx.logger.info('retention: this node sweeps again');
    skipping = false;
    let held = true;
    const renewal = setInterval(() => {
      renewLease(ctx.db, SWEEP_LEASE, options.node, leaseMs, now()).then(
        (still) => {
          if (!still) held = false;
        },
        () => undefined,
      );
    }, leaseMs / 3);
    renewal.unref();
    try {
      return await sweepRetention(ctx, () => held);
    } finally {
      clearInterval(renewal);
      await releaseLease(ctx.db, SWEEP_LEASE, options.node).catch((error: unknown) =>
        ctx.logger.warn(`retention: could not let go of the sweep's lease (it lapses): ${String(error)}`),
      );
    }
  };
}

/**
 * Retention (spec, "Storage by tier"): items past their deadline are deleted, files and row,
 * unless the owner downloaded them or extended retention. The row goes first (in a transaction),
 * so no listed item ever points at deleted files; a crash (or a store that cannot be reached)
 * before the files go leaves orphaned files that startup (disk) or `fsck` removes. Expired upload
 * tickets, idempotency records, lapsed upload claims (receive-claim.ts) and finished generations
 * past their keep go too. Files go through the blob store. `holding` says whether this node still
 * holds the sweep (createRetentionSweeper); the work stops between steps once not.
 */
export async function sweepRetention(ctx: GenerationServices, holding: () => boolean = () => true): Promise<number> {
  const now = ctx.clock.now();
  const expired = await ctx.db.all<{
    id: string;
  }>('SELECT id FROM media WHERE expires_at IS NOT NULL AND expires_at <= ? AND downloaded_at IS NULL', now);
  const deleted: string[] = [];
  await ctx.db.transaction(async (tx) => {
    for (const { id } of expired) {
      // Another node took the sweep over (this one stalled past its lease): it deletes the rest.
      if (!holding()) break;
      // Re-checked inside the transaction: a download may have landed since the select.
      const result = await tx.run(
        'DELETE FROM media WHERE id = ? AND expires_at <= ? AND downloaded_at IS NULL',
        id,
        now,
      );
      if (Number(result.changes) > 0) deleted.push(id);
    }
  });
  for (const id of deleted) await removeItemFiles(ctx.blobs, ctx.logger, id);

  // A received upload keeps a day past its URL's expiry for the client to complete it (and holds
  // its quota reservation that long).
  const stale = await ctx.db.all<{ id: string }>(
    "SELECT id FROM uploads WHERE (state = 'pending' AND expires_at <= ?) OR (state = 'received' AND expires_at <= ?)",
    now,
    now - RECEIVED_UPLOAD_KEEP_MS,
  );
  for (const { id } of stale) {
    if (!holding()) break;
    await ctx.db.run('DELETE FROM uploads WHERE id = ?', id);
    await removeUploadFiles(ctx, id);
  }
  await ctx.db.run('DELETE FROM idempotency WHERE created_at <= ?', now - IDEMPOTENCY_TTL_MS);
  // Claims are wall-clock leases (the test clock moves only the service's own deadlines).
  await sweepUploadClaims(ctx.db, Date.now());
  if (holding()) await sweepFinishedGenerations(ctx, now);
  if (deleted.length > 0) ctx.logger.info(`retention removed ${deleted.length} item(s)`);
  return deleted.length;
}

/**
 * Removes every stored body of an upload whose row is gone, by listing its prefix: the one the row
 * named, and any a PUT that lost the upload to another could not delete (upload-receive.ts). Never
 * throws: a file it cannot remove now is an orphan `fsck` lists.
 */
async function removeUploadFiles(ctx: GenerationServices, id: string): Promise<void> {
  try {
    const keys: string[] = [];
    for await (const blob of ctx.blobs.list(uploadPrefix(id))) keys.push(blob.key);
    await Promise.all(keys.map((key) => ctx.blobs.delete(key)));
  } catch {
    ctx.logger.warn(`could not remove the received file of ${id} (fsck lists it)`);
  }
}

/**
 * How long a finished generation stays answerable after it ended (`GET /v1/generations/:id`, its
 * place in `GET /v1/generations`, and a repeat of its request with the same Idempotency-Key, which
 * answers the generation rather than making another): 7 days, the shortest retention of the items
 * it made (the Free tier's, spec "Storage by tier"). That is past the day of webhook retries (a
 * client told late still finds it) and never shorter than the idempotency window: a repeat within
 * the window finds its generation, and is neither run nor charged again.
 */
export const FINISHED_GENERATION_KEEP_MS = Math.max(7 * 86_400_000, IDEMPOTENCY_TTL_MS);

/**
 * Finished generations past FINISHED_GENERATION_KEEP_MS (from their end) go; those made within the
 * idempotency window stay whatever the keep says. Queued and running ones never go.
 */
export async function sweepFinishedGenerations(ctx: GenerationServices, now: number): Promise<number> {
  const removed = await deleteFinishedGenerations(ctx.db, now - FINISHED_GENERATION_KEEP_MS, now - IDEMPOTENCY_TTL_MS);
  if (removed > 0) ctx.logger.info(`retention: ${removed} finished generation(s) past their keep removed`);
  return removed;
}
