import type { Sql } from './sql/types.ts';

/**
 * Named work that one node at a time does (the retention sweep): a row in `leases` (SQLite version
 * 9, PostgreSQL version 8) naming the node that holds it and until when.
 *
 * Decided over a session-level `pg_try_advisory_lock` on a connection held for the work: behind
 * PgBouncer in transaction mode (docs/scaling.md recommends it) a session lock lands on whichever
 * server connection the statement got and stays there when that connection serves another client,
 * so it neither excludes reliably nor is released by our unlock. A transaction-scoped advisory lock
 * would survive the pooler, but it holds a transaction (and a connection) open for the whole sweep,
 * which waits on the bucket's deletes. A lease row is taken by one conditional upsert, survives any
 * pooler, and is the same SQL on SQLite; its price is that a node killed while holding it blocks
 * the work until the lease lapses (`ttlMs`), which for retention is a round or two late.
 *
 * Times are wall-clock milliseconds (never a test clock), as the concurrency leases are.
 */

/**
 * Takes `name` for `node` until `now + ttlMs` if nobody holds it, its lease has lapsed, or `node`
 * holds it already (a renewal). One statement, atomic on both databases: on PostgreSQL a second
 * taker's upsert waits for the first's row and then finds it held. Resolves with whether `node`
 * holds it now.
 */
export async function takeLease(db: Sql, name: string, node: string, ttlMs: number, now: number): Promise<boolean> {
  const result = await db.run(
    `INSERT INTO leases (name, node, lease_until) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET node = excluded.node, lease_until = excluded.lease_until
     WHERE leases.lease_until <= ? OR leases.node = excluded.node`,
    name,
    node,
    now + ttlMs,
    now,
  );
  return result.changes > 0;
}

/** Extends `node`'s lease on `name`; false when it is no longer `node`'s (it lapsed and another took it). */
export async function renewLease(db: Sql, name: string, node: string, ttlMs: number, now: number): Promise<boolean> {
  const result = await db.run('UPDATE leases SET lease_until = ? WHERE name = ? AND node = ?', now + ttlMs, name, node);
  return result.changes > 0;
}

/** Lets go of `name` if `node` holds it, so another node need not wait for the lease to lapse. */
export async function releaseLease(db: Sql, name: string, node: string): Promise<void> {
  await db.run('DELETE FROM leases WHERE name = ? AND node = ?', name, node);
}

/** Who holds `name` now (a lapsed lease is held by nobody). */
export async function leaseHolder(db: Sql, name: string, now: number): Promise<string | null> {
  const row = await db.get<{ node: string }>('SELECT node FROM leases WHERE name = ? AND lease_until > ?', name, now);
  return row?.node ?? null;
}
