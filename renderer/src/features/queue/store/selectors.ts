import type { Job, JobState } from '../../../../../shared/ipc/index.ts';
import type { QueueState } from './initialState.ts';

const ACTIVE_STATES: readonly JobState[] = ['uploading', 'generating', 'downloading'];
const FINISHED_STATES: readonly JobState[] = ['done', 'failed', 'canceled'];

export function isActive(job: Job): boolean {
  return ACTIVE_STATES.includes(job.state);
}
export function isFinished(job: Job): boolean {
  return FINISHED_STATES.includes(job.state);
}

/** Queued jobs in queue order (position, then age). */
export function queuedJobs(state: Pick<QueueState, 'jobs'>): Job[] {
  return Object.values(state.jobs)
    .filter((j) => j.state === 'queued')
    .sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity) || a.createdAt.localeCompare(b.createdAt));
}

export function runningJobs(state: Pick<QueueState, 'jobs'>): Job[] {
  return Object.values(state.jobs)
    .filter(isActive)
    .sort((a, b) => (a.startedAt ?? a.createdAt).localeCompare(b.startedAt ?? b.createdAt));
}

/** Finished jobs, newest first. */
export function finishedJobs(state: Pick<QueueState, 'jobs'>): Job[] {
  return Object.values(state.jobs)
    .filter(isFinished)
    .sort((a, b) => (b.finishedAt ?? b.createdAt).localeCompare(a.finishedAt ?? a.createdAt));
}

export function pendingCount(state: Pick<QueueState, 'jobs'>): number {
  let n = 0;
  for (const j of Object.values(state.jobs)) if (!isFinished(j)) n++;
  return n;
}

/** Seconds the job has been running (or ran), from start or creation. */
export function elapsedSeconds(job: Job, now: number): number {
  const from = Date.parse(job.startedAt ?? job.createdAt);
  const to = job.finishedAt ? Date.parse(job.finishedAt) : now;
  return Math.max(0, (to - from) / 1000);
}

/** 0..1, or null when the total is unknown (an indeterminate bar). */
export function progressFraction(p: { done: number; total: number | null } | null): number | null {
  if (!p || p.total === null || p.total === 0) return null;
  return Math.min(1, p.done / p.total);
}

/** Whole seconds until the rate limit frees a slot; null when a slot is free or it is unknown. */
export function slotFreesInSeconds(
  state: Pick<QueueState, 'stats'>,
  waitingUntil: string | null = null,
  now = Date.now(),
): number | null {
  const fromStats = state.stats?.nextSlotInMs ?? 0;
  const fromJob = waitingUntil ? Date.parse(waitingUntil) - now : 0;
  const ms = Math.max(fromStats, fromJob);
  return ms > 0 ? Math.ceil(ms / 1000) : null;
}

const STATE_LABELS: Readonly<Record<JobState, string>> = {
  queued: 'Queued',
  uploading: 'Uploading',
  generating: 'Generating',
  downloading: 'Downloading',
  done: 'Done',
  failed: 'Failed',
  canceled: 'Canceled',
};

export function stateLabel(job: Job, now = Date.now()): string {
  if (job.state === 'queued' && job.waitingUntil && Date.parse(job.waitingUntil) > now) return 'Waiting for rate limit';
  return STATE_LABELS[job.state];
}
