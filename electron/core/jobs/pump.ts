/**
 * The queue's turns: which jobs start (the scheduler's pure picks, scheduler.ts and holds.ts), the
 * runs they start, the wake-up for what becomes startable later, and the holds the queue announces.
 */
import { JobTransitionError } from './journal.ts';
import { apply, Stopped } from './runtime.ts';
import type { QueueState } from './queue-state.ts';
import { advance, perform } from './runner.ts';
import type { JobEffect, JobEvent } from './machine.ts';
import { errorInfo } from './ports.ts';
import { selectJobsToStartWithHolds } from './holds.ts';
import { nextWakeAt, queueStats, selectJobsToStart } from './scheduler.ts';
import type { QueueStats, SchedulerView } from './scheduler.ts';
import { isFinished } from './state.ts';
import type { Job } from './state.ts';
import { slotHold, startHold } from './waiting.ts';
import type { JobHold } from './waiting.ts';

export const ordered = (q: QueueState): Job[] =>
  [...q.jobs.values()].sort(
    (a, b) =>
      Number(a.state !== 'queued') - Number(b.state !== 'queued') ||
      a.position - b.position ||
      a.createdAt - b.createdAt,
  );

export const unfinished = (q: QueueState): Job[] => ordered(q).filter((j) => !isFinished(j.state));

export const view = (q: QueueState): SchedulerView => ({
  now: q.clock.now(),
  paused: q.paused,
  jobs: unfinished(q),
  limits: q.limits,
  rateLimit: q.api.rateLimit,
  offline: q.offline.state,
});

export const stats = (q: QueueState): QueueStats => queueStats(view(q), q.slotStartedAt, q.averageMs);

/**
 * Why a queued job waits, in the order the creator can act on: its own schedule, the service,
 * then a budget (holdFor), then the slots. Counts only (no sort), since every job event asks it.
 */
export function holdOf(q: QueueState, job: Job, slots?: QueueStats): JobHold | null {
  if (job.state !== 'queued') return null;
  const now = q.clock.now();
  const own = startHold(job, { now, offline: q.offline.state }) ?? q.holds.get(job.id) ?? null;
  if (own) return own;
  if (slots) return slotHold(job, slots);
  const cached =
    q.slotCache ??
    q.cacheSlots(
      queueStats(
        {
          now,
          paused: q.paused,
          jobs: [...q.jobs.values()].filter((j) => !isFinished(j.state)),
          limits: q.limits,
          rateLimit: q.api.rateLimit,
        },
        q.slotStartedAt,
        q.averageMs,
      ),
    );
  return slotHold(job, cached);
}

/**
 * A queued job whose reason to wait changed without an event of its own (the jobs before it took
 * the last slots, or one freed) is announced again, so its row says why it waits. By reason
 * only: a slot's estimate moves with every pass, and the stats carry it.
 */
function announceHoldChanges(q: QueueState, slots: QueueStats): void {
  for (const job of q.jobs.values()) {
    if (job.state !== 'queued') {
      q.forgetAnnouncedHold(job.id);
      continue;
    }
    if (q.announceHold(job.id, holdOf(q, job, slots)?.reason ?? null)) q.emit({ type: 'job', job });
  }
}

/** Every queued job's hold changed (the service went away, came back, or the next probe moved). */
export function announceQueued(q: QueueState): void {
  for (const job of q.jobs.values()) if (job.state === 'queued') q.emit({ type: 'job', job });
  q.emit({ type: 'stats', stats: stats(q) });
}

export function pump(q: QueueState): void {
  if (!q.started || q.disposed) return;
  const v = view(q);
  for (const job of startable(q, v)) launch(q, job.id, { type: 'launch' });
  const wake = nextWakeAt(v);
  const timer = wake === null ? null : setTimeout(() => pump(q), Math.max(10, wake - q.clock.now()));
  timer?.unref?.();
  q.setWakeTimer(timer);
  // After the launches, so the UI sees the slots they took.
  const after = stats(q);
  announceHoldChanges(q, after);
  q.emit({ type: 'stats', stats: after });
  if (q.controllers.size === 0) wakeIdle(q);
}

export function wakeIdle(q: QueueState): void {
  for (const w of q.takeIdleWaiters()) w();
}

/** The scheduler's picks, minus held jobs; a job whose hold changed is announced. */
function startable(q: QueueState, v: SchedulerView): Job[] {
  if (!q.holdFor) return selectJobsToStart(v);
  const picked = selectJobsToStartWithHolds(v, q.holdFor);
  const before = q.replaceHolds(picked.holds);
  for (const id of new Set([...before.keys(), ...q.holds.keys()])) {
    const job = q.jobs.get(id);
    if (job && before.get(id)?.message !== q.holds.get(id)?.message) q.emit({ type: 'job', job });
  }
  return picked.start;
}

/**
 * Starts a run for the job: `event` (the scheduler's launch), or `effects` the machine already
 * asked for (a restart's follow, reconcile or download). A run that fails ends its job failed.
 */
export function launch(q: QueueState, id: string, start: JobEvent | { effects: JobEffect[]; job: Job }): void {
  const controller = new AbortController();
  q.runStarted(id, controller);
  const signal = controller.signal;
  const run = (async () => {
    try {
      if ('type' in start) await advance(q, id, start, signal);
      else for (const effect of start.effects) await perform(q, start.job, effect, signal);
    } catch (error) {
      if (!(error instanceof Stopped) && !(error instanceof JobTransitionError) && !signal.aborted) {
        const info = errorInfo(error);
        try {
          apply(q, id, { type: 'failed', error: { code: info.code, message: info.message } });
        } catch {
          // Already finished some other way.
        }
      }
    } finally {
      q.runEnded(id);
    }
  })();
  q.track(run);
}

/** Resolves when no job is running or startable; a held job (holdFor) waits for the creator, not the queue. */
export function idle(q: QueueState): Promise<void> {
  const busy =
    q.controllers.size > 0 ||
    selectJobsToStart(view(q)).length > 0 ||
    unfinished(q).some((j) => j.state === 'queued' && !q.holds.has(j.id) && !q.paused);
  if (!busy) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const check = (): void => {
      const stillQueued = unfinished(q).some((j) => j.state === 'queued' && !q.holds.has(j.id)) && !q.paused;
      if (q.controllers.size === 0 && !stillQueued) resolve();
      else q.addIdleWaiter(check);
    };
    q.addIdleWaiter(check);
  });
}
