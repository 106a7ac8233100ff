import type { Db } from '../storage/db.ts';
import { getGeneration, isFinal } from '../storage/generations.ts';
import type { GenerationRow } from '../storage/generations.ts';
import { inJsonArray } from '../storage/sql/dialect.ts';

/**
 * Waiting for a generation to end: a synchronous request on PostgreSQL waits for its queued job,
 * which any node may run (sync-generation.ts). The node that ends a generation wakes its own
 * waiters at once (`GenerationEnds.ended`, from finished()); one that another node ended is found by a
 * look at every awaited row, in one statement per node, every LOOK_MS while any are awaited: up
 * to 100 ms late (a LISTEN channel would make it immediate; the relay of provider webhooks,
 * webhook-relay.ts, has the connection for it).
 */
export const LOOK_MS = 100;

/**
 * The waiters of one running service on its generations' ends, and the look that finds ends
 * written by other nodes. The Generations object (generations.ts) holds one.
 */
export class GenerationEnds {
  private readonly wakers = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private looking = false;
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Wakes this node's waiters of `id` (it has just ended here). */
  ended(id: string): void {
    for (const wake of this.wakers.get(id) ?? []) wake();
  }

  /**
   * The generation's row once it is final (or gone), or null when `signal` aborts first. A failed
   * read of the row (the database lost) rejects.
   */
  async until(id: string, signal: AbortSignal): Promise<GenerationRow | undefined | null> {
    for (;;) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      let wakers = this.wakers.get(id);
      if (!wakers) this.wakers.set(id, (wakers = new Set()));
      wakers.add(wake);
      signal.addEventListener('abort', wake, { once: true });
      try {
        // Read after the waker is in place: an end between the read and the wait still wakes it.
        const row = await getGeneration(this.db, id);
        if (!row || isFinal(row.status)) return row;
        if (signal.aborted) return null;
        this.look();
        await woken;
        if (signal.aborted) return null;
      } finally {
        signal.removeEventListener('abort', wake);
        wakers.delete(wake);
        if (wakers.size === 0) this.wakers.delete(id);
        if (this.wakers.size === 0 && this.timer) {
          clearInterval(this.timer);
          this.timer = undefined;
        }
      }
    }
  }

  private look(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.looking || this.wakers.size === 0) return;
      this.looking = true;
      const ids = [...this.wakers.keys()];
      this.db
        .all<{ id: string }>(
          `SELECT id FROM generations WHERE ${inJsonArray(this.db.dialect, 'id')}
             AND status IN ('succeeded', 'failed', 'canceled')`,
          JSON.stringify(ids),
        )
        .then(
          (ended) => {
            for (const { id } of ended) this.ended(id);
          },
          // Each waiter reads its row again when woken; a lost database surfaces there.
          () => {
            for (const id of ids) this.ended(id);
          },
        )
        .finally(() => (this.looking = false));
    }, LOOK_MS);
    this.timer.unref();
  }
}
