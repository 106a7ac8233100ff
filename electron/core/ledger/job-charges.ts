/**
 * What the ledger learns from the job queue's events: each submit's key, and a job's charge with
 * its result (docs/workflows.md, "The ledger, reconciliation and budgets").
 */
import type { Job } from '../jobs/index.ts';
import { itemsCharge, utcDay, type Ledger } from './ledger.ts';

export interface JobChargeRecorder {
  /**
   * Each submit's key, noted as the job turns generating (before its POST leaves): the service
   * charges that key, whatever key the app holds when the result arrives (docs/decisions.md).
   */
  noteSubmit: (job: Job) => void;
  /** A job's charge enters the ledger with its result; delivered once its files are saved. */
  recordCharge: (job: Job) => void;
}

export interface JobChargeDeps {
  ledger: Ledger;
  profileId: string;
  /** The last 4 characters of the key in use, or null when there is none. */
  keyLast4: () => string | null;
  now: () => number;
}

export function jobChargeRecorder(deps: JobChargeDeps): JobChargeRecorder {
  const { ledger, profileId, now } = deps;
  return {
    noteSubmit: (job) => {
      const key = deps.keyLast4();
      if (job.state !== 'generating' || job.submittedAt === null || !key) return;
      ledger.noteSubmit({ jobId: job.id, profileId, attempt: job.attempts, key, at: job.submittedAt });
    },
    recordCharge: (job) => {
      if (!job.result) return;
      const known = ledger.get(job.id);
      const ids = job.result.items.map((i) => i.id);
      if (known && (known.delivered || job.state !== 'done') && known.itemIds.join() === ids.join()) return;
      const price = job.result.price ?? itemsCharge(job.result.items) ?? 0;
      const created = job.result.items[0]?.createdAt;
      ledger.record({
        jobId: job.id,
        profileId,
        key: ledger.submitKey(job.id) ?? deps.keyLast4(),
        day: utcDay(created ?? job.submittedAt ?? now()),
        itemIds: ids,
        price,
        delivered: job.state === 'done',
      });
    },
  };
}
