import { newPutId } from '../storage/layout.ts';
import { serverRunSql } from '../storage/sql/dialect.ts';
import type { Sql } from '../storage/sql/types.ts';

/** How long a PUT's claim on its upload lasts unless renewed; it is renewed every third of that. */
export const RECEIVE_CLAIM_MS = 30_000;

/** The prefix of upload claims' names in `leases`. */
const CLAIM_PREFIX = 'upload:';

/** A PUT's hold on its upload: renewed while the body arrives, let go of at every end. */
export interface ReceiveClaim {
  /**
   * Names this PUT (newPutId): the holder its row names, and the key its body is stored under
   * (uploadPutKey), one of its own, so that this PUT's body never replaces another's in the store.
   */
  readonly id: string;
  /**
   * Aborted once a renewal finds the claim gone or held by another PUT (after a database restart
   * voided it, see claimUpload): this PUT must stop, keeping nothing.
   */
  readonly lost: AbortSignal;
  /**
   * Renews the claim now and says whether this PUT still holds it; false aborts `lost` too. Asked
   * once the whole body has arrived, before the store keeps it, so a takeover since the last
   * renewal is not missed. Rejects when the database cannot be asked.
   */
  confirm(): Promise<boolean>;
  /** Stops renewing and lets go, so the URL can be used again at once (a failure is left to lapse). */
  release(): Promise<void>;
}

/**
 * Claims upload `id` for one PUT, whichever node it reached: a row in `leases` named `upload:<id>`
 * held by this PUT, named `<server run>|<node>.<run>|<put id>` (one conditional upsert, atomic on both databases, as leases.ts says), renewed
 * while the body arrives. Resolves with the claim, or with until when another PUT holds it.
 *
 * The holder names the database server's run (serverRun) before a `|`: a PUT that failed because
 * the database went away answered 503 without being able to let go of its claim, and the URL must
 * work once the database is back rather than after the lease; a claim of an earlier run is
 * therefore void, and another PUT may take it. A PUT still streaming across the restart keeps its
 * claim if its renewal finds it untaken (the renewal names the new run); if another PUT took it,
 * the renewal (every RECEIVE_CLAIM_MS / 3) or `confirm` at the body's end finds that and the PUT
 * stops before the store keeps its body.
 *
 * The claim cannot see a restart and a whole second PUT in the moment between `confirm` and the
 * store's completion (the disk's rename, or the last part and CompleteMultipartUpload): both bodies
 * then reach the store. Each is stored under its PUT's own key (`id`), so neither replaces the
 * other, and marking the upload received (one conditional UPDATE that records the key,
 * upload-receive.ts) keeps exactly one; the other PUT deletes its own body and answers 400. The
 * claim still refuses a second PUT in the common case, before it streams anything, and stops a PUT
 * taken over while its body arrives, before the store keeps it.
 * `onError`: a renewal or release the database could not answer (the claim then lapses).
 */
export async function claimUpload(
  db: Sql,
  id: string,
  holder: string,
  onError: (error: unknown) => void,
): Promise<ReceiveClaim | Busy> {
  const name = `${CLAIM_PREFIX}${id}`;
  const run = serverRunSql(db.dialect);
  const mine = `${holder}|${newPutId()}`;
  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    // The run is read by the statement itself: no restart can fall between reading it and claiming.
    const taken = await db.get<{ node: string }>(
      `INSERT INTO leases (name, node, lease_until) VALUES (?, ${run} || '|' || ?, ?)
       ON CONFLICT (name) DO UPDATE SET node = excluded.node, lease_until = excluded.lease_until
       WHERE leases.lease_until <= ? OR substr(leases.node, 1, length(${run}) + 1) <> ${run} || '|'
       RETURNING node`,
      name,
      mine,
      now + RECEIVE_CLAIM_MS,
      now,
    );
    if (taken) return held(db, id, name, mine, onError);
    const other = await db.get<{ lease_until: number | string }>('SELECT lease_until FROM leases WHERE name = ?', name);
    // Let go of between the two statements: try again (once; a third PUT may have taken it meanwhile).
    if (other || attempt > 0) return { busyUntil: other ? Number(other.lease_until) : now + RECEIVE_CLAIM_MS };
  }
}

/** Another PUT holds the upload: until when its claim lasts unless renewed (wall-clock ms). */
export interface Busy {
  busyUntil: number;
}

function held(db: Sql, id: string, name: string, mine: string, onError: (error: unknown) => void): ReceiveClaim {
  const run = serverRunSql(db.dialect);
  const lost = new AbortController();
  // Still this PUT's (its id after the `|`, whatever run it names) and the upload still pending:
  // extended, and named after the server's current run, so that a claim that lived through a
  // restart untaken is valid again. An upload received meanwhile (by a PUT that took the claim over
  // and let go of it) or swept is lost too: this PUT's body would never be kept, so it stops now.
  const renew = async (): Promise<boolean> => {
    if (lost.signal.aborted) return false;
    const result = await db.run(
      `UPDATE leases SET node = ${run} || '|' || ?, lease_until = ? WHERE name = ? AND node LIKE ?
       AND EXISTS (SELECT 1 FROM uploads WHERE id = ? AND state = 'pending')`,
      mine,
      Date.now() + RECEIVE_CLAIM_MS,
      name,
      `%|${mine}`,
      id,
    );
    if (result.changes === 0) lost.abort();
    return result.changes > 0;
  };
  const renewal = setInterval(() => {
    renew().catch(onError);
  }, RECEIVE_CLAIM_MS / 3);
  renewal.unref();
  return {
    id: mine.slice(mine.lastIndexOf('|') + 1),
    lost: lost.signal,
    confirm: renew,
    async release() {
      clearInterval(renewal);
      await db.run('DELETE FROM leases WHERE name = ? AND node LIKE ?', name, `%|${mine}`).catch(onError);
    },
  };
}

/**
 * On start: the claims this node's earlier runs left (a PUT cut by kill -9 never let go of its
 * claim), so that the client's resend right after the restart is received at once rather than
 * after the lease. Only this node's (`<node>.` in the holder, claim-node.ts): another node's claim
 * may be a PUT streaming now.
 */
export async function clearDeadClaims(db: Sql, holder: { node: string; run: string }): Promise<number> {
  const result = await db.run(
    'DELETE FROM leases WHERE name LIKE ? AND node LIKE ? AND node NOT LIKE ?',
    `${CLAIM_PREFIX}%`,
    `%|${holder.node}.%`,
    `%|${holder.node}.${holder.run}|%`,
  );
  return result.changes;
}

/**
 * Deletes upload claims whose lease has lapsed (`now`: wall-clock ms, as the leases are): a PUT
 * killed with its node, or whose release failed, leaves its row, and an upload never tried again
 * would keep it for ever. One statement; a lapsed claim is free to take anyway, so removing one
 * that a PUT is taking at the same moment changes nothing (its upsert inserts or updates).
 */
export async function sweepUploadClaims(db: Sql, now: number): Promise<number> {
  const result = await db.run('DELETE FROM leases WHERE name LIKE ? AND lease_until <= ?', `${CLAIM_PREFIX}%`, now);
  return result.changes;
}
