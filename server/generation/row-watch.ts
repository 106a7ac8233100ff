import type { Logger } from '../logger.ts';
import type { Db } from '../storage/db.ts';
import { isFinal } from '../storage/generations.ts';
import type { GenerationRow } from '../storage/generations.ts';
import type { QueuedGeneration } from '../storage/generation-queue.ts';
import { inJsonArray } from '../storage/sql/dialect.ts';
import { Canceled, LeaseLost } from './lease.ts';

/** How often a node looks at the rows of the generations it runs: a DELETE on another node, a lost lease. */
export const WATCH_INTERVAL_MS = 1_000;

interface Watched {
  attempt: string;
  signal: AbortSignal;
}

/**
 * While this node runs a queued generation (queued-generation.ts), its row is looked at every
 * second, with every other generation it runs in one statement: canceled (a DELETE on any node)
 * stops the work here, and a row another attempt holds, or that is final, stops it without writing
 * anything (LeaseLost). So does pg-boss giving the attempt up (its heartbeat was refused). One per
 * running service (generations.ts); its timer runs only while a row is watched.
 */
export class RowWatch {
  private readonly rows = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private readonly db: Db;
  private readonly shutdown: AbortSignal;
  private readonly logger: Logger;
  /** The runs' cancels (GenerationScope.cancels): what a look aborts. */
  private readonly cancels: Map<string, AbortController>;

  constructor(db: Db, shutdown: AbortSignal, logger: Logger, cancels: Map<string, AbortController>) {
    this.db = db;
    this.shutdown = shutdown;
    this.logger = logger;
    this.cancels = cancels;
  }

  /** Watches the generation's row while its job runs here; returns the end of the watch. */
  watch(id: string, job: QueuedGeneration): () => void {
    if (!this.timer) {
      this.timer = setInterval(() => void this.look(), WATCH_INTERVAL_MS);
      this.timer.unref();
    }
    this.rows.set(id, { attempt: job.attempt, signal: job.signal });
    const onGivenUp = () => this.cancels.get(id)?.abort(new LeaseLost(id));
    job.signal.addEventListener('abort', onGivenUp, { once: true });
    return () => {
      job.signal.removeEventListener('abort', onGivenUp);
      this.rows.delete(id);
      if (this.rows.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private async look(): Promise<void> {
    const rows = this.rows;
    if (rows.size === 0 || this.shutdown.aborted) return;
    try {
      const found = await this.db.all<{ id: string; status: GenerationRow['status']; lease_owner: string | null }>(
        `SELECT id, status, lease_owner FROM generations WHERE ${inJsonArray(this.db.dialect, 'id')}`,
        JSON.stringify([...rows.keys()]),
      );
      const byId = new Map(found.map((r) => [r.id, r]));
      for (const [id, w] of rows) {
        const row = byId.get(id);
        const cancel = this.cancels.get(id);
        if (!cancel || cancel.signal.aborted) continue;
        if (row?.status === 'canceled') {
          this.logger.info(`generation ${id} was canceled on another node: stopping it here`);
          cancel.abort(new Canceled());
        } else if (!row || isFinal(row.status) || row.lease_owner !== w.attempt) {
          this.logger.warn(`generation ${id} is held by another node now: stopping it here`);
          cancel.abort(new LeaseLost(id));
        }
      }
    } catch (error) {
      this.logger.warn(
        `could not look at running generations: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
