import { selectJobsToStart } from './scheduler.ts';
import type { SchedulerView } from './scheduler.ts';
import { holdsSlot } from './state.ts';
import type { Job } from './state.ts';
import type { JobHold } from './waiting.ts';

/** Says whether `job` may start, given the jobs in flight (those running and those starting in this pass). */
export type HoldCheck = (job: Job, inFlight: readonly Job[]) => JobHold | null;

/**
 * selectJobsToStart, with a hold check: jobs are checked one by one in the order the scheduler
 * picks them, each seeing the ones picked before it as in flight (two jobs that each fit a budget
 * alone may not both start). A held job frees its slot for the next one. Every other queued job
 * is checked too, so the queue can say why it waits before a slot frees. Pure.
 */
export function selectJobsToStartWithHolds(
  view: SchedulerView,
  holdFor: HoldCheck,
): { start: Job[]; holds: Map<string, JobHold> } {
  const holds = new Map<string, JobHold>();
  const start: Job[] = [];
  const starting = new Set<string>();
  const running = view.jobs.filter((j) => holdsSlot(j.state));
  for (let pass = 0; pass <= view.jobs.length; pass++) {
    // Jobs picked so far count as running (their slots are taken) and as requests already sent.
    const jobs = view.jobs
      .filter((j) => !holds.has(j.id))
      .map((j) => (starting.has(j.id) ? { ...j, state: 'uploading' as const } : j));
    const rate = view.rateLimit;
    const rateLimit =
      rate && rate.remaining !== null ? { ...rate, remaining: Math.max(0, rate.remaining - starting.size) } : rate;
    if (rate && rate.remaining !== null && starting.size > 0 && rate.remaining - starting.size <= 0) break;
    let held = false;
    for (const job of selectJobsToStart({ ...view, jobs, rateLimit })) {
      const hold = holdFor(job, [...running, ...start]);
      if (hold) {
        holds.set(job.id, hold);
        held = true;
        break;
      }
      starting.add(job.id);
      start.push(job);
    }
    if (!held) break;
  }
  for (const job of view.jobs) {
    if (job.state !== 'queued' || starting.has(job.id) || holds.has(job.id)) continue;
    const hold = holdFor(job, [...running, ...start]);
    if (hold) holds.set(job.id, hold);
  }
  return { start, holds };
}
