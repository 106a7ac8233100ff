import { randomUUID } from 'node:crypto';
import type { MediaKind } from '../../../shared/api/index.ts';
import type { Clock } from '../../../shared/clock.ts';
import { CoreError } from '../errors.ts';
import type { JobJournal, JobPatch } from './journal.ts';
import { JobTransitionError } from './journal.ts';
import { jobStep } from './machine.ts';
import type { JobEffect, JobEvent } from './machine.ts';
import type { OfflineWatch } from './offline.ts';
import type { GenerationService, JobDownloader, StartFrameUploader } from './ports.ts';
import type { ProgressTracker } from './progress.ts';
import type { KindCounts, QueueStats } from './scheduler.ts';
import { holdsSlot } from './state.ts';
import type { Job, JobState } from './state.ts';

export type QueueEvent =
  { type: 'job'; job: Job } | { type: 'removed'; id: string } | { type: 'stats'; stats: QueueStats };

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

/** The queue's settings, defaults applied (JobQueueOptions documents each). */
export interface QueueSettings {
  useIdempotency: boolean;
  generationTimeoutMs: number;
  reconcileWindowMs: number;
  reconcilePollMs: number;
  skewMs: number;
  defaultRetryAfterMs: number;
  cancelGraceMs: number;
}

/**
 * What the runner works with: the ports, and the queue's mutable state in one place. The state
 * machine (machine.ts) decides; the functions over this object perform what it decided.
 */
export interface QueueRuntime {
  readonly journal: JobJournal;
  readonly api: GenerationService;
  readonly uploader: StartFrameUploader | undefined;
  readonly downloader: JobDownloader | undefined;
  readonly clock: Clock;
  readonly settings: QueueSettings;
  /** The journal is the truth on disk; this mirror of it saves re-reading every row on each pump. */
  readonly jobs: Map<string, Job>;
  readonly controllers: Map<string, AbortController>;
  /** Jobs whose generation POST is on its way, its answer (202 or result) not back yet. */
  readonly submitting: Set<string>;
  /** Canceled jobs waiting for their POST's answer: when the wait ends, the run is stopped. */
  readonly cancelTimers: Map<string, ReturnType<typeof setTimeout>>;
  /** How the service answered the last generation POST: 202 (true) or 200 (false); null before any. */
  answersAsync: boolean | null;
  readonly slotStartedAt: Map<string, number>;
  readonly averageMs: Record<MediaKind, number | null>;
  limits: KindCounts;
  disposed: boolean;
  readonly progress: ProgressTracker;
  readonly offline: OfflineWatch;
  emit(event: QueueEvent): void;
  /** Mirrors a journal row (and drops the cached slot counts). */
  remember(job: Job): Job;
  schedulePump(): void;
}

/** Journal first, then everything else: the only way a job changes state. */
function moveJob(rt: QueueRuntime, before: Job, to: JobState, patch: JobPatch, detail?: string): Job {
  const id = before.id;
  const job = rt.remember(rt.journal.transition(id, to, patch, detail));
  if (to === 'queued') rt.progress.forget(id);
  else if (to === 'done' || to === 'failed' || to === 'canceled') rt.progress.settle(id);
  if (holdsSlot(before.state) && !holdsSlot(to)) releaseSlot(rt, job);
  if (!holdsSlot(before.state) && holdsSlot(to)) rt.slotStartedAt.set(id, rt.clock.now());
  rt.emit({ type: 'job', job });
  return job;
}

/** A finished generation feeds the kind's average duration (the slot estimates). */
function releaseSlot(rt: QueueRuntime, job: Job): void {
  const startedAt = rt.slotStartedAt.get(job.id);
  rt.slotStartedAt.delete(job.id);
  if (startedAt === undefined || job.state === 'queued' || job.state === 'canceled' || job.state === 'failed') return;
  const took = rt.clock.now() - startedAt;
  const prev = rt.averageMs[job.kind];
  rt.averageMs[job.kind] = prev === null ? took : prev * 0.7 + took * 0.3;
}

/** The user canceled: stop the run, unless its generation POST is still to be answered. */
function stopRun(rt: QueueRuntime, id: string): void {
  const controller = rt.controllers.get(id);
  if (controller && rt.submitting.has(id) && rt.api.cancelGeneration) {
    // The POST is on its way and the service may be rendering already: dropping the request
    // would leave that generation running and charged, unseen. Its 202 names it, and the
    // `accepted` event cancels it with DELETE. Only a service known to answer synchronously is
    // hung up on: waiting for its answer would only wait for the render and its charge.
    if (rt.answersAsync === false) {
      const timer = setTimeout(() => controller.abort(), rt.settings.cancelGraceMs);
      timer.unref?.();
      rt.cancelTimers.set(id, timer);
    }
  } else controller?.abort();
}

/** Cancels on the service too; best effort (a final or unknown generation has nothing to cancel). */
function cancelRemote(rt: QueueRuntime, generationId: string): void {
  if (!rt.api.cancelGeneration) return;
  rt.api.cancelGeneration(generationId).catch(() => {
    // The service finishes or forgets it on its own; the job is canceled here either way.
  });
}

/** The effects done here, at once; the ones that run (upload, submit, …) are returned for the runner. */
function performNow(rt: QueueRuntime, id: string, effects: readonly JobEffect[]): JobEffect[] {
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
        rt.jobs.delete(id);
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
  rt: QueueRuntime,
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
