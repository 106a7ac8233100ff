import { randomUUID } from 'node:crypto';
import { serverRun } from '../storage/sql/dialect.ts';
import type { Sql } from '../storage/sql/types.ts';
import { releaseLease, renewLease } from '../storage/leases.ts';

/** How long a PUT's claim on its upload lasts unless renewed; it is renewed every third of that. */
export const RECEIVE_CLAIM_MS = 30_000;

/** A PUT's hold on its upload: renewed while the body arrives, let go of at every end. */
export interface ReceiveClaim {
  /** Stops renewing and lets go, so the URL can be used again at once (a failure is left to lapse). */
  release(): Promise<void>;
}

/**
 * Claims upload `id` for one PUT, whichever node it reached: a row in `leases` named `upload:<id>`
 * held by this PUT (one conditional upsert, atomic on both databases, as leases.ts says), renewed
 * while the body arrives. Resolves with the claim, or null when another PUT holds it.
 *
 * The holder names the database server's run (serverRun): a PUT that failed because the database
 * went away answered 503 without being able to let go of its claim, and the URL must work once the
 * database is back rather than after the lease; a claim of an earlier run is therefore void. A PUT
 * still streaming across such a restart loses its exclusivity for the rest of its body (the other
 * PUT and it write the same complete object), which is the price of not blocking the URL.
 */
export async function claimUpload(db: Sql, id: string, onLost: (error: unknown) => void): Promise<ReceiveClaim | null> {
  const name = `upload:${id}`;
  const run = `${await serverRun(db)}|`;
  const holder = `${run}${randomUUID()}`;
  const now = Date.now();
  const taken = await db.run(
    `INSERT INTO leases (name, node, lease_until) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET node = excluded.node, lease_until = excluded.lease_until
     WHERE leases.lease_until <= ? OR substr(leases.node, 1, ?) <> ?`,
    name,
    holder,
    now + RECEIVE_CLAIM_MS,
    now,
    run.length,
    run,
  );
  if (taken.changes === 0) return null;
  const renewal = setInterval(() => {
    renewLease(db, name, holder, RECEIVE_CLAIM_MS, Date.now()).catch(onLost);
  }, RECEIVE_CLAIM_MS / 3);
  renewal.unref();
  return {
    async release() {
      clearInterval(renewal);
      await releaseLease(db, name, holder).catch(onLost);
    },
  };
}
