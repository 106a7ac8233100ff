/**
 * What a profile's budgets price a job at, and the jobs "submit once anyway" exempts from them
 * (docs/workflows.md, "The ledger, reconciliation and budgets").
 */
import type { ModelRecord } from '../../../shared/api/index.ts';
import type { Job } from '../jobs/index.ts';
import { catalogEstimate } from './budget.ts';

export interface BudgetTerms {
  /** The catalog the renderer shows, which prices a job the routing preview did not. */
  setModels: (models: ModelRecord[]) => void;
  /** The job's previewed price, else the catalog's estimate; null when neither is known. */
  priceOf: (job: Job) => number | null;
  /** "Submit once anyway": the job is not held by a budget until it ends. */
  exempt: (jobId: string) => void;
  isExempt: (jobId: string) => boolean;
  /** A job changed: one that ended drops its exemption (a retry is held again). */
  jobChanged: (job: Job) => void;
}

export function budgetTerms(): BudgetTerms {
  let models: ModelRecord[] = [];
  const exempted = new Set<string>();
  return {
    setModels: (all) => {
      models = all;
    },
    priceOf: (job) => {
      const previewed = job.route?.price;
      if (typeof previewed === 'number') return previewed;
      return catalogEstimate(models, job.kind, job.request, job.startFrame !== null);
    },
    exempt: (jobId) => void exempted.add(jobId),
    isExempt: (jobId) => exempted.has(jobId),
    jobChanged: (job) => {
      if (job.state === 'done' || job.state === 'failed' || job.state === 'canceled') exempted.delete(job.id);
    },
  };
}
