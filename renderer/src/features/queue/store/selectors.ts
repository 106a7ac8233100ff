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

/** What the top bar's jobs popover lists: the running jobs, then the queued in order, then the finished, newest first. */
export function recentJobs(state: Pick<QueueState, 'jobs'>): Job[] {
  return [...runningJobs(state), ...queuedJobs(state), ...finishedJobs(state)];
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

/**
 * Whole seconds until a slot frees (of `kind` when given: each kind has its own slots); null when
 * a slot is free or it is unknown.
 */
export function slotFreesInSeconds(
  state: Pick<QueueState, 'stats'>,
  waitingUntil: string | null = null,
  now = Date.now(),
  kind?: Job['request']['kind'],
): number | null {
  const byKind = kind ? state.stats?.nextSlotInMsByKind?.[kind] : undefined;
  const fromStats = (byKind !== undefined ? byKind : state.stats?.nextSlotInMs) ?? 0;
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
  if (job.state === 'queued' && job.hold?.reason === 'offline') return 'Waiting for the service';
  if (job.state === 'queued' && job.hold?.reason === 'scheduled') return 'Scheduled';
  if (job.state === 'queued' && job.waitingUntil && Date.parse(job.waitingUntil) > now) return 'Waiting for rate limit';
  return STATE_LABELS[job.state];
}

/** Jobs holding a slot (uploading or generating), the queue header's "Running". */
export function runningCount(state: Pick<QueueState, 'jobs'>): number {
  let n = 0;
  for (const j of Object.values(state.jobs)) if (j.state === 'uploading' || j.state === 'generating') n++;
  return n;
}

/**
 * The Rate limit card, for the kind the queue waits for (the stats say which): "Slot free", "Video
 * slot frees in ~42 s", or "All 5 video slots busy" before any run has given an estimate.
 */
export function slotCardText(stats: QueueState['stats'], elapsedMs = 0): string {
  // No slot frees for a service that cannot be reached: say that instead of "Slot free".
  if (stats?.offline) return 'Waiting for the service';
  if (!stats || !stats.nextSlotKind || stats.nextSlotInMs === 0) return 'Slot free';
  const kind = stats.nextSlotKind;
  const name = kind === 'video' ? 'Video' : 'Image';
  if (stats.nextSlotInMs === null) {
    const limit = stats.limit[kind];
    return limit === 1 ? `The ${kind} slot is busy` : `All ${limit} ${kind} slots busy`;
  }
  const left = stats.nextSlotInMs - elapsedMs;
  // Past the estimate and no event yet: the slot is about to free, not free.
  return left > 0
    ? `${name} slot frees in ~${Math.max(1, Math.round(left / 1000))} s`
    : `${name} slot frees any moment`;
}

/** Whole seconds from now to an ISO time, at least 1; null when unknown or past. */
function secondsUntil(iso: string | null, now: number): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso) - now;
  return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : null;
}

/**
 * Why a queued job waits, in one line: its schedule, the service, a budget, or a busy slot (the
 * slot's wait is read live from the stats, since it moves with every finished job).
 */
export function holdText(
  job: Job,
  stats: QueueState['stats'],
  now: number,
  formatTime: (iso: string) => string,
): string | null {
  const hold = job.state === 'queued' ? job.hold : null;
  if (!hold) return null;
  if (hold.reason === 'scheduled') return hold.until ? `Scheduled for ${formatTime(hold.until)}` : 'Scheduled';
  if (hold.reason === 'offline') {
    const next = secondsUntil(hold.until, now);
    return next === null ? `${hold.message} · trying now` : `${hold.message} · next try in ${next} s`;
  }
  if (hold.reason === 'slot') {
    const wait = slotFreesInSeconds({ stats }, null, now, job.request.kind);
    return wait === null ? hold.message : `${hold.message} · ~${wait} s`;
  }
  return hold.message;
}
