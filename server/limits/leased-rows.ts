import type { Sql } from '../storage/sql/types.ts';

/** How long a row outlives its node's last renewal; renewed every third of it. */
export const SLOT_LEASE_MS = 30_000;
/** A failed release is tried again after this, doubling up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;
/** Ids per renewal statement (a placeholder each). */
const RENEW_CHUNK = 200;

/**
 * The rows one node holds in a leased table (`running_slots`, `storage_reservations`: an `id`, the
 * holding `node` and `lease_until`), renewed every third of the lease while held. Only the rows this
 * node still holds in memory are renewed: a row whose release failed (the database was down) is
 * dropped from renewal at once, so its lease lapses on its own, and its DELETE is retried until it
 * succeeds or the lease has lapsed anyway. A row whose insert committed while its answer was lost is
 * never in memory, so it lapses too (docs/scaling.md). Leases are wall-clock time.
 */
export class LeasedRows {
  private readonly held = new Set<string>();
  private readonly retries = new Set<NodeJS.Timeout>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly db: Sql;
  private readonly table: 'running_slots' | 'storage_reservations';
  readonly node: string;
  private readonly now: () => number;

  constructor(db: Sql, table: 'running_slots' | 'storage_reservations', node: string, now: () => number = Date.now) {
    this.db = db;
    this.table = table;
    this.node = node;
    this.now = now;
    this.timer = setInterval(() => void this.renew().catch(() => undefined), SLOT_LEASE_MS / 3);
    this.timer.unref();
  }

  /** When a new row's lease ends. */
  leaseUntil(): number {
    return this.now() + SLOT_LEASE_MS;
  }

  /** A row this node inserted (committed): renewed from now on. */
  add(id: string): void {
    if (!this.closed) this.held.add(id);
  }

  /** Rows held now (tests, and the renewal's cost). */
  get size(): number {
    return this.held.size;
  }

  /**
   * Stops renewing the row and deletes it. A failure is reported to `onFirstError` once and the
   * delete retried in the background until it succeeds or the row's lease has lapsed.
   */
  async release(id: string, onFirstError: (error: unknown) => void = () => undefined): Promise<void> {
    this.held.delete(id);
    const lapsesAt = this.leaseUntil();
    try {
      await this.delete(id);
    } catch (error) {
      onFirstError(error);
      this.retry(id, lapsesAt, RETRY_FIRST_MS);
    }
  }

  /** Pushes the lease of every row still held forward (the timer; tests call it too). */
  async renew(): Promise<void> {
    const ids = [...this.held];
    for (let i = 0; i < ids.length; i += RENEW_CHUNK) {
      const chunk = ids.slice(i, i + RENEW_CHUNK);
      await this.db.run(
        `UPDATE ${this.table} SET lease_until = ? WHERE node = ? AND id IN (${chunk.map(() => '?').join(', ')})`,
        this.leaseUntil(),
        this.node,
        ...chunk,
      );
    }
  }

  /** Stops renewing and retrying, and deletes every row of this node (the service is closing). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const retry of this.retries) clearTimeout(retry);
    this.retries.clear();
    this.held.clear();
    await this.db.run(`DELETE FROM ${this.table} WHERE node = ?`, this.node);
  }

  private async delete(id: string): Promise<void> {
    await this.db.run(`DELETE FROM ${this.table} WHERE id = ?`, id);
  }

  private retry(id: string, lapsesAt: number, waitMs: number): void {
    if (this.closed || this.now() >= lapsesAt) return;
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.delete(id).catch(() => this.retry(id, lapsesAt, Math.min(waitMs * 2, RETRY_MAX_MS)));
    }, waitMs);
    timer.unref();
    this.retries.add(timer);
  }
}
