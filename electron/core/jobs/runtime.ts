import { randomUUID } from 'node:crypto';
import { CoreError } from '../errors.ts';
import type { JobPatch } from './journal.ts';
import { JobTransitionError } from './journal.ts';
import { jobStep } from './machine.ts';
import type { JobEffect, JobEvent } from './machine.ts';
import type { QueueState } from './queue-state.ts';
import { holdsSlot } from './state.ts';
import type { Job, JobState } from './state.ts';

/** Thrown when an operation does not fit the job's state (e.g. removing a running job). */
export class JobConflictError extends CoreError {
  declare readonly code: 'conflict';
  constructor(message: string) {
    super('conflict', message);
    this.name = 'JobConflictError';
  }
}

/** Thrown inside a run when its job was canceled or the queue is shutting down. */
export class Stopped extends Error {}

/** Journal first, then everything else: the only way a job changes state. */
function moveJob(rt: QueueState, before: Job, to: JobState, patch: JobPatch, detail?: string): Job {
  const id = before.id;
  const job = rt.remember(rt.journal.transition(id, to, patch, detail));
  if (to === 'queued') rt.progress.forget(id);
  else if (to === 'done' || to === 'failed' || to === 'canceled') {
    rt.progress.settle(id);
    rt.forgetRetries(id);
  }
  if (holdsSlot(before.state) && !holdsSlot(to)) rt.slotReleased(job);
  if (!holdsSlot(before.state) && holdsSlot(to)) rt.slotTaken(id);
  rt.emit({ type: 'job', job });
  return job;
}

/** The user canceled: stop the run, unless its generation POST is still to be answered. */
function stopRun(rt: QueueState, id: string): void {
  const controller = rt.controllers.get(id);
  if (controller && rt.submitting.has(id) && rt.api.cancelGeneration) {
    // The POST is on its way and the service may be rendering already: dropping the request
    // would leave that generation running and charged, unseen. Its 202 names it, and the
    // `accepted` event cancels it with DELETE. Only a service known to answer synchronously is
    // hung up on: waiting for its answer would only wait for the render and its charge.
    if (rt.answersAsync === false) {
      const timer = setTimeout(() => controller.abort(), rt.settings.cancelGraceMs);
      timer.unref?.();
      rt.cancelAfter(id, timer);
    }
  } else controller?.abort();
}

/** Cancels on the service too; best effort (a final or unknown generation has nothing to cancel). */
function cancelRemote(rt: QueueState, generationId: string): void {
  if (!rt.api.cancelGeneration) return;
  rt.api.cancelGeneration(generationId).catch(() => {
    // The service finishes or forgets it on its own; the job is canceled here either way.
  });
}

/** The effects done here, at once; the ones that run (upload, submit, …) are returned for the runner. */
function performNow(rt: QueueState, id: string, effects: readonly JobEffect[]): JobEffect[] {
  const runs: JobEffect[] = [];
  for (const effect of effects) {
    switch (effect.type) {
      case 'stopRun':
        stopRun(rt, id);
        break;
      case 'abortRun':
        rt.controllers.get(id)?.abort();
        break;
      case 'endRun':
        throw new Stopped();
      case 'cancelRemote':
        cancelRemote(rt, effect.generationId);
        break;
      case 'goOffline':
        rt.offline.goOffline();
        break;
      case 'probeNow':
        rt.offline.probeNow();
        break;
      case 'forget':
        rt.journal.remove(id);
        rt.forget(id);
        rt.forgetRetries(id);
        rt.progress.forget(id);
        rt.emit({ type: 'removed', id });
        break;
      case 'pump':
        rt.schedulePump();
        break;
      default:
        runs.push(effect);
    }
  }
  return runs;
}

/**
 * Feeds `event` to the state machine and performs its step: the journal write, then the effects
 * that happen at once. Returns the job as it is now and the effects left to run. A run's `signal`,
 * once aborted, stops it before it moves the job (a key the service already has is still written).
 */
export function apply(
  rt: QueueState,
  id: string,
  event: JobEvent,
  signal?: AbortSignal,
): { job: Job; runs: JobEffect[] } {
  const job = rt.jobs.get(id) ?? rt.journal.get(id);
  if (!job) throw new Error(`No job ${id}`);
  const step = jobStep(job, event, { now: rt.clock.now(), newKey: randomUUID(), saves: rt.downloader !== undefined });
  switch (step.kind) {
    case 'ignore':
      return { job, runs: [] };
    case 'conflict':
      throw new JobConflictError(step.message);
    case 'refuse':
      throw new JobTransitionError(job, event.type);
    case 'move': {
      performNow(rt, id, step.before);
      if (signal?.aborted) throw new Stopped();
      const moved = moveJob(rt, job, step.to, step.patch, step.detail);
      return { job: moved, runs: performNow(rt, id, step.effects) };
    }
    case 'update': {
      const updated = rt.remember(rt.journal.update(id, step.patch));
      if (step.announce) rt.emit({ type: 'job', job: updated });
      return { job: updated, runs: performNow(rt, id, step.effects) };
    }
    case 'effects':
      return { job, runs: performNow(rt, id, step.effects) };
  }
}
