import { randomInt, randomUUID } from 'node:crypto';
import type { Clock } from '../../../shared/clock.ts';
import { systemClock } from '../../../shared/clock.ts';
import type { JobJournal } from './journal.ts';
import type { GenerationService, JobDownloader, StartFrameUploader } from './ports.ts';
import type { HoldCheck } from './holds.ts';
import type { OfflineState, JobHold } from './waiting.ts';
import { concurrencyLimits } from './scheduler.ts';
import type { KindCounts, QueueStats } from './scheduler.ts';
import type { Job, JobResult, NewJob } from './state.ts';
import { createProgressTracker } from './progress.ts';
import type { JobProgress } from './progress.ts';
import { createOfflineWatch } from './offline.ts';
import { apply } from './runtime.ts';
import { QueueState } from './queue-state.ts';
import type { QueueEvent, QueueSettings } from './queue-state.ts';
import { announceQueued, holdOf, idle, launch, ordered, pump, stats, wakeIdle } from './pump.ts';
import { isUnreachable } from './waiting.ts';

export { JobConflictError } from './runtime.ts';
export type { QueueEvent } from './queue-state.ts';
export type { GenerationProgress, JobProgress, TransferProgress } from './progress.ts';

export interface JobQueueOptions {
  journal: JobJournal;
  api: GenerationService;
  /** Uploads a job's start frame; jobs with a start frame fail without it. */
  uploader?: StartFrameUploader;
  /** Saves results; without it a job is done when the generation returns. */
  downloader?: JobDownloader;
  clock?: Clock;
  /** Fixed limits instead of the ones from GET /usage. */
  limits?: KindCounts;
  /** The service honours Idempotency-Key (docs/api.md). When false, interrupted jobs are found in /media. */
  idempotency?: boolean;
  generationTimeoutMs?: number;
  /** How long after its submit an interrupted job's item may still show up in /media. */
  reconcileWindowMs?: number;
  reconcilePollMs?: number;
  /** Tolerance between our clock and the service's createdAt. */
  clockSkewMs?: number;
  /** Wait after a 429 that carries no retry_after. */
  defaultRetryAfterMs?: number;
  /**
   * All of one job's retry waits together (default 15 minutes): the client's inside each call,
   * the runner's, and the waits in the queue after a 429. Past it the job fails with the error it
   * last had, rather than waiting on without end (docs/architecture.md).
   */
  retryWaitMs?: number;
  onEvent?: (event: QueueEvent) => void;
  /**
   * Transfer progress re-emits the job at most once per this many ms (default 100), so a fast
   * transfer does not flood the UI; the last report of a transfer (done = total) always goes out.
   */
  progressIntervalMs?: number;
  /**
   * docs/workflows.md (budgets): a queued job this holds is not started; checked each time the scheduler
   * picks startable jobs (holds.ts). `recheck()` after what it reads changed.
   */
  holdFor?: HoldCheck;
  /**
   * A job canceled while its generation POST is on its way waits for the answer, however long it
   * takes (the POST's own timeout bounds it): a 202 names the generation, which is then canceled
   * with DELETE, so no cancel is lost. Only where the service answered a POST synchronously
   * before (200, no asynchronous mode: its answer comes with the finished render) is the request
   * dropped, this long after the cancel (default 0); the hang-up stops such a render.
   */
  cancelGraceMs?: number;
  /**
   * While the service is unreachable, the first probe comes this many ms after it went away
   * (default 2000), then twice as long after each failed probe, up to `offlineProbeMaxMs` (60 s).
   */
  offlineProbeMs?: number;
  offlineProbeMaxMs?: number;
}

export interface JobQueue {
  /** Loads the journal, reconciles interrupted jobs, learns the tier's limits, starts working. */
  start(): Promise<void>;
  enqueue(input: NewJob): Job;
  /** N variations of one prompt, each with its own seed. */
  enqueueBatch(input: NewJob, count: number, options?: { seed?: number }): Job[];
  cancel(id: string): Job | null;
  /**
   * Queues a failed or canceled job again. With `result` (a recovery: the items were found on the
   * service), the job only downloads them; it is never submitted again.
   */
  retry(id: string, result?: JobResult): Job | null;
  duplicate(id: string): Job | null;
  /**
   * Drops a finished (done, failed or canceled) job from the queue and the journal; it stays gone
   * after a restart. Null when there is no such job; JobConflictError when it is queued or running.
   */
  remove(id: string): boolean | null;
  /** Moves a queued job to `index` among the queued jobs. */
  move(id: string, index: number): void;
  /**
   * "Submit at…" for a queued job (epoch ms), or null to submit it now ("Submit now"; while the
   * service is unreachable that also asks it again at once). Null when there is no such job;
   * JobConflictError when it is no longer queued.
   */
  schedule(id: string, at: number | null): Job | null;
  /** The service is unreachable: since when and the next probe; null when it is reachable. */
  offline(): OfflineState | null;
  pause(): void;
  resume(): void;
  list(): Job[];
  get(id: string): Job | null;
  /** The job's upload and download progress (each null until that transfer starts). */
  progress(id: string): JobProgress;
  stats(): QueueStats;
  /** Why a queued job waits (schedule, service, budget, slot), or null; the same as progress(id).hold. */
  holdOf(id: string): JobHold | null;
  /** Checks holds and startable jobs again (a budget was raised, a job exempted). */
  recheck(): void;
  /** Resolves when no job is running or startable (tests, CLI). */
  idle(): Promise<void>;
  /** Stops work; jobs stay in the journal as they are and are picked up on the next start. */
  dispose(): Promise<void>;
}

const MAX_SEED = 2 ** 31 - 1;

function settingsOf(options: JobQueueOptions): QueueSettings {
  return {
    useIdempotency: options.idempotency ?? true,
    generationTimeoutMs: options.generationTimeoutMs ?? 15 * 60_000,
    reconcileWindowMs: options.reconcileWindowMs ?? 15 * 60_000,
    reconcilePollMs: options.reconcilePollMs ?? 5_000,
    skewMs: options.clockSkewMs ?? 5_000,
    defaultRetryAfterMs: options.defaultRetryAfterMs ?? 10_000,
    cancelGraceMs: options.cancelGraceMs ?? 0,
    retryWaitMs: options.retryWaitMs ?? 15 * 60_000,
  };
}

/** The queue's state, its progress tracker and offline watch wired to it. */
function createQueueState(options: JobQueueOptions): QueueState {
  const clock = options.clock ?? systemClock;
  return new QueueState({
    journal: options.journal,
    api: options.api,
    uploader: options.uploader,
    downloader: options.downloader,
    clock,
    settings: settingsOf(options),
    holdFor: options.holdFor,
    limits: options.limits ?? concurrencyLimits(null),
    onEvent: options.onEvent,
    pump,
    progress: (q) =>
      createProgressTracker({
        clock,
        intervalMs: options.progressIntervalMs ?? 100,
        // A canceled job's transfer may still report while it unwinds: it is no longer news.
        live: (id) => !q.disposed && !q.controllers.get(id)?.signal.aborted,
        announce: (id) => {
          const job = q.jobs.get(id);
          if (job && !q.disposed) q.emit({ type: 'job', job });
        },
      }),
    offline: (q) =>
      createOfflineWatch({
        getUsage: () => options.api.getUsage(),
        clock,
        probeMs: options.offlineProbeMs ?? 2_000,
        probeMaxMs: options.offlineProbeMaxMs ?? 60_000,
        disposed: () => q.disposed,
        changed: () => announceQueued(q),
        back: (usage) => {
          if (usage && !options.limits) q.setLimits(concurrencyLimits(usage));
          else q.forgetSlots();
          announceQueued(q);
          q.schedulePump();
        },
      }),
  });
}

/** Picks up the journal as the last run left it, learns the tier's limits, starts working. */
async function startQueue(q: QueueState, fixedLimits: boolean): Promise<void> {
  if (!q.markStarted()) return;
  for (const job of ordered(q)) {
    const { job: now, runs } = apply(q, job.id, { type: 'restart' });
    if (runs.length === 0) continue;
    if (now.state === 'generating') q.slotTaken(now.id);
    launch(q, now.id, { effects: runs, job: now });
  }
  if (!fixedLimits) {
    try {
      q.setLimits(concurrencyLimits(await q.api.getUsage()));
    } catch (error) {
      // An older service: stay at one of each until we know the tier. Unreachable: the
      // queued jobs wait for it, and the probe learns the limits when it is back.
      if (isUnreachable(error)) q.offline.goOffline();
    }
  }
  pump(q);
}

function enqueueMany(q: QueueState, inputs: NewJob[], batchId: string | null): Job[] {
  if (q.disposed) throw new Error('The job queue is shut down');
  const created = q.journal.create(
    inputs.map((i) => ({
      kind: i.kind,
      request: i.request,
      startFrame: i.startFrame ?? null,
      endFrame: i.endFrame ?? null,
      batchId,
      variationOf: i.variationOf ?? null,
      route: i.route ?? null,
      submitAt: i.submitAt ?? null,
    })),
  );
  for (const job of created) q.emit({ type: 'job', job: q.remember(job) });
  q.schedulePump();
  return created;
}

function enqueueBatch(q: QueueState, input: NewJob, count: number, seed: number | undefined): Job[] {
  const n = Math.max(1, Math.min(100, Math.floor(count)));
  const base = seed ?? input.request.seed ?? randomInt(0, MAX_SEED - n);
  const requests = Array.from({ length: n }, (_, i) => ({
    ...input,
    request: { ...input.request, seed: (base + i) % MAX_SEED },
  }));
  return enqueueMany(q, requests, randomUUID());
}

/** Moves a queued job to `index` among the queued jobs. */
function reorder(q: QueueState, id: string, index: number): void {
  const queued = ordered(q).filter((j) => j.state === 'queued');
  const from = queued.findIndex((j) => j.id === id);
  if (from < 0) return;
  const [job] = queued.splice(from, 1);
  queued.splice(Math.max(0, Math.min(queued.length, index)), 0, job!);
  const base = Math.min(...queued.map((j) => j.position));
  // Write every new position before announcing any: a listener that reads the whole queue
  // while handling one event (to show "position N") must not see two jobs at one place.
  const moved = queued.flatMap((j, i) => {
    const { job: after } = apply(q, j.id, { type: 'reorder', position: base + i });
    return after === j ? [] : [after];
  });
  for (const job of moved) q.emit({ type: 'job', job });
  q.schedulePump();
}

function retry(q: QueueState, id: string, result: JobResult | undefined): Job | null {
  if (!q.jobs.has(id)) return null;
  const position = Math.max(0, ...[...q.jobs.values()].map((j) => j.position)) + 1;
  const event = { type: 'retry', position, stopping: q.controllers.has(id), ...(result ? { result } : {}) } as const;
  return apply(q, id, event).job;
}

function duplicate(q: QueueState, id: string): Job | null {
  const job = q.jobs.get(id);
  if (!job) return null;
  const { kind, request, startFrame, endFrame, variationOf, route } = job;
  return enqueueMany(q, [{ kind, request, startFrame, endFrame, variationOf, route }], null)[0]!;
}

async function dispose(q: QueueState): Promise<void> {
  const runs = q.markDisposed();
  q.offline.dispose();
  q.progress.dispose();
  await Promise.allSettled(runs);
  wakeIdle(q);
}

/**
 * The job queue: the state machine (machine.ts) decides each job's next state and what to do,
 * the runner (runner.ts, pump.ts) does it through the ports (docs/architecture.md).
 */
export function createJobQueue(options: JobQueueOptions): JobQueue {
  const q = createQueueState(options);
  const known = (id: string): Job | null => q.jobs.get(id) ?? null;
  return {
    start: () => startQueue(q, options.limits !== undefined),
    enqueue: (input) => enqueueMany(q, [input], null)[0]!,
    enqueueBatch: (input, count, opts = {}) => enqueueBatch(q, input, count, opts.seed),
    cancel: (id) => (known(id) ? apply(q, id, { type: 'cancel' }).job : null),
    retry: (id, result) => retry(q, id, result),
    remove(id) {
      if (!known(id)) return null;
      apply(q, id, { type: 'remove' });
      return true;
    },
    duplicate: (id) => duplicate(q, id),
    move: (id, index) => reorder(q, id, index),
    // At once, not on the next microtask: the caller answers with stats() right after, and those
    // must already count the jobs this resume starts (the "Running 0 after Resume" race).
    pause() {
      q.setPaused(true);
      pump(q);
    },
    resume() {
      q.setPaused(false);
      pump(q);
    },
    schedule: (id, at) => (known(id) ? apply(q, id, { type: 'schedule', at }).job : null),
    offline: () => q.offline.state,
    list: () => ordered(q),
    get: known,
    progress(id) {
      const job = known(id);
      const live = q.progress.get(id);
      const hold = job?.state === 'queued' ? holdOf(q, job) : null;
      return hold ? { ...live, hold } : live;
    },
    stats: () => stats(q),
    holdOf: (id) => {
      const job = known(id);
      return job ? holdOf(q, job) : null;
    },
    recheck: () => q.schedulePump(),
    idle: () => idle(q),
    dispose: () => dispose(q),
  };
}
