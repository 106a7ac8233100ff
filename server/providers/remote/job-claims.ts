import { randomUUID } from 'node:crypto';
import { releaseLease, takeLease } from '../../storage/leases.ts';
import type { Sql } from '../../storage/sql/types.ts';

/**
 * How long a node's claim on a synchronous generation's provider job lasts past its last renewal
 * (every third of it). A node that dies holds its jobs this long at most; then another node resumes
 * them (its next check, every third of this too).
 */
export const PROVIDER_JOB_LEASE_MS = 60_000;

/** `leases.name` of a provider job's claim; 'provider-job:' is 13 characters (the SQL below relies on it). */
const PREFIX = 'provider-job:';

/**
 * The claim's node has no session with the database any more: the process is gone (killed, or
 * restarted: its successor on the same machine resumes at once instead of after the lease). A
 * node's LISTEN connection (webhook-relay.ts) carries its id as `application_name`, which
 * pg_stat_activity shows every role. It is a session of PostgreSQL's own (`serve --listen-database`
 * when the pool goes through a transaction-mode pooler: pg_stat_activity, read through that pooler,
 * shows the whole server, that session with it); a LISTEN connection that goes through a pooler
 * carries no id (webhook-relay.ts). Only trusted when this node's own session shows there (the one
 * `?`: this node's id): while it does not, or while this node's own connection is down, claims hold
 * until their lease lapses. A host that vanished without
 * closing its connections keeps its session until the server's TCP keepalive drops it; its claims
 * lapse with their lease.
 */
const HOLDER_GONE = `(NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = leases.node)
  AND EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = ?))`;

/**
 * Which node polls a synchronous generation's provider job, on PostgreSQL (several nodes): a row in
 * `leases` (server/storage/leases.ts) named `provider-job:<provider_jobs.id>`. The node that submits
 * the job claims it in the transaction that records the job; a node resuming jobs (at its start, or
 * when a dead node's claims lapse) takes only those nobody holds, so two nodes do not poll (and
 * finish) the same job. Asynchronous generations' jobs are not claimed here: they belong to
 * whichever node holds the generation from the queue (its heartbeat is their lease).
 *
 * One renewal for all of a node's claims: the claims of jobs that have ended (their row went with
 * the commit of the items, or with the failure) are let go of, and the rest extended; two statements
 * every third of the lease whatever the number of jobs. SQLite (one node) has no claims.
 */
export class ProviderJobClaims {
  /**
   * This node in `leases.node`: every claim of this node carries it, so one statement renews them
   * all; and the `application_name` of its LISTEN connection, so that others see it is alive.
   */
  readonly node = `clipdesk-node:${randomUUID()}`;
  readonly leaseMs: number;
  private readonly db: Sql;

  constructor(db: Sql, leaseMs = PROVIDER_JOB_LEASE_MS) {
    this.db = db;
    this.leaseMs = leaseMs;
  }

  /** A job just submitted: claimed in `tx`, the transaction that records it, so no node sees it unclaimed. */
  async claimNew(tx: Sql, rowId: string): Promise<void> {
    await takeLease(tx, PREFIX + rowId, this.node, this.leaseMs, Date.now());
  }

  /**
   * A job to resume: true when this node now holds it and it is still unfinished (read again after
   * the claim: the node that had it may have finished it in between).
   */
  async take(rowId: string): Promise<boolean> {
    const now = Date.now();
    const taken = await this.db.run(
      `INSERT INTO leases (name, node, lease_until) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET node = excluded.node, lease_until = excluded.lease_until
       WHERE leases.lease_until <= ? OR leases.node = excluded.node OR ${HOLDER_GONE}`,
      PREFIX + rowId,
      this.node,
      now + this.leaseMs,
      now,
      this.node,
    );
    if (taken.changes === 0) return false;
    const open = await this.db.get("SELECT 1 AS open FROM provider_jobs WHERE id = ? AND status = 'running'", rowId);
    if (open) return true;
    await this.release(rowId);
    return false;
  }

  async release(rowId: string): Promise<void> {
    await releaseLease(this.db, PREFIX + rowId, this.node);
  }

  /** Ids of unfinished synchronous jobs nobody holds (a dead node's, or handed back by a stop). */
  async unclaimed(): Promise<Set<string>> {
    const rows = await this.db.all<{ id: string }>(
      `SELECT id FROM provider_jobs WHERE status = 'running' AND generation_id IS NULL AND NOT EXISTS
         (SELECT 1 FROM leases WHERE leases.name = 'provider-job:' || provider_jobs.id AND leases.lease_until > ?
            AND NOT ${HOLDER_GONE})`,
      Date.now(),
      this.node,
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Lets go of claims whose job has ended, and extends the rest. */
  async renew(): Promise<void> {
    await this.db.run(
      `DELETE FROM leases WHERE node = ?
         AND NOT EXISTS (SELECT 1 FROM provider_jobs WHERE provider_jobs.id = substr(leases.name, 14))`,
      this.node,
    );
    await this.db.run('UPDATE leases SET lease_until = ? WHERE node = ?', Date.now() + this.leaseMs, this.node);
  }

  /** A stopping node hands its jobs back (they stay recorded): another node may resume them at once. */
  async releaseAll(): Promise<void> {
    await this.db.run('DELETE FROM leases WHERE node = ?', this.node);
  }
}
