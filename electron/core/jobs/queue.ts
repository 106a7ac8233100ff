import { randomInt, randomUUID } from 'node:crypto';
import type { GeneratedItem, Generation, MediaKind } from '../../../shared/api/index.ts';
import { generationResult } from '../api/generations.ts';
import { ServiceError, type ServiceErrorCode } from '../api/errors.ts';
import type { Clock } from '../../../shared/clock.ts';
import { systemClock } from '../../../shared/clock.ts';
import type { JobJournal, JobPatch } from './journal.ts';
import { JobTransitionError } from './journal.ts';
import { errorInfo } from './ports.ts';
import { findJobItems } from './find-items.ts';
import type { GenerationCallOptions, GenerationService, JobDownloader, StartFrameUploader } from './ports.ts';
import { selectJobsToStartWithHolds } from './holds.ts';
import type { HoldCheck } from './holds.ts';
import { isUnreachable, probeDelayMs, slotHold, startHold } from './waiting.ts';
import type { JobHold, OfflineState } from './waiting.ts';
import { concurrencyLimits, nextWakeAt, queueStats, selectJobsToStart } from './scheduler.ts';
import type { KindCounts, QueueStats, SchedulerView } from './scheduler.ts';
import { holdsSlot, isFinished, routeFromResponse } from './state.ts';
import type { GenerationInput, Job, JobResult, JobRoute, JobState } from './state.ts';
import { CoreError } from '../errors.ts';

export type QueueEvent =
  { type: 'job'; job: Job } | { type: 'removed'; id: string } | { type: 'stats'; stats: QueueStats };

/** Bytes moved so far for one job; `total` null while unknown. */
export interface TransferProgress {
  done: number;
  total: number | null;
}

/** Where an asynchronous generation is on the service, from its last poll. */
export interface GenerationProgress {
  id: string;
  step: Generation['status'];
  queuePosition: number | null;
  /** 0–1 when the provider reports progress. */
  progress: number | null;
  /** Set while the client waits out a 429 (Retry-After): what it waits to send, and until when (epoch ms). */
  wait?: { what: string; until: number } | null;
}

/** A job's transfers, in memory only (a restart forgets them; the journal holds the outcome). */
export interface JobProgress {
  upload: TransferProgress | null;
  /** Over the job's items: what the finished ones weighed plus the running one. */
  download: TransferProgress | null;
  /** Asynchronous mode only: the service's step and queue position (the next poll refills it after a restart). */
  generation?: GenerationProgress | null;
  /** Issue 14: why a queued job waits (scheduled, the service unreachable, every slot busy); computed when asked. */
  hold?: JobHold | null;
}

const NO_PROGRESS: JobProgress = Object.freeze({ upload: null, download: null });

/** Thrown when an operation does not fit the job's state (e.g. removing a running job). */
export class JobConflictError extends CoreError {
  declare readonly code: 'conflict';
  constructor(message: string) {
    super('conflict', message);
    this.name = 'JobConflictError';
  }
}

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
  onEvent?: (event: QueueEvent) => void;
  /**
   * Transfer progress re-emits the job at most once per this many ms (default 100), so a fast
   * transfer does not flood the UI; the last report of a transfer (done = total) always goes out.
   */
  progressIntervalMs?: number;
  /**
   * Issue 14 (budgets): a queued job this holds is not started; checked each time the scheduler
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

export interface EnqueueInput {
  kind: MediaKind;
  request: GenerationInput;
  startFrame?: string | null;
  /** Variations of this media id through `POST /videos/variations` (`request.n` of them). */
  variationOf?: string | null;
  /** Issue 14: the routing preview's row for this request at submit; null when it could not be had. */
  route?: JobRoute | null;
  /** "Submit at…": epoch ms; the job waits for it (hold `scheduled`). */
  submitAt?: number | null;
}

export interface JobQueue {
  /** Loads the journal, reconciles interrupted jobs, learns the tier's limits, starts working. */
  start(): Promise<void>;
  enqueue(input: EnqueueInput): Job;
  /** N variations of one prompt, each with its own seed. */
  enqueueBatch(input: EnqueueInput, count: number, options?: { seed?: number }): Job[];
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

/** Thrown inside a run when its job was canceled or the queue is shutting down. */
class Stopped extends Error {}

/**
 * What items found in /media cost: the sum of their prices (each item carries its own charge), or
 * null when the service does not say. Before, such a job had no price at all, so the finished
 * jobs added up to less than the service had charged.
 */
function itemsPrice(items: readonly GeneratedItem[]): number | null {
  if (items.length === 0 || items.some((i) => typeof i.price !== 'number')) return null;
  return Math.round(items.reduce((n, i) => n + (i.price ?? 0), 0) * 1e6) / 1e6;
}

const AMBIGUOUS = new Set<ServiceErrorCode>(['network_error', 'timeout', 'internal_error', 'invalid_response']);
const MAX_SEED = 2 ** 31 - 1;

export function createJobQueue(options: JobQueueOptions): JobQueue {
  const { journal, api } = options;
  const clock = options.clock ?? systemClock;
  const useIdempotency = options.idempotency ?? true;
  const generationTimeoutMs = options.generationTimeoutMs ?? 15 * 60_000;
  const reconcileWindowMs = options.reconcileWindowMs ?? 15 * 60_000;
  const reconcilePollMs = options.reconcilePollMs ?? 5_000;
  const skewMs = options.clockSkewMs ?? 5_000;
  const defaultRetryAfterMs = options.defaultRetryAfterMs ?? 10_000;
  const progressIntervalMs = options.progressIntervalMs ?? 100;
  const cancelGraceMs = options.cancelGraceMs ?? 0;
  const offlineProbeMs = options.offlineProbeMs ?? 2_000;
  const offlineProbeMaxMs = options.offlineProbeMaxMs ?? 60_000;

  let limits: KindCounts = options.limits ?? concurrencyLimits(null);
  let paused = false;
  let started = false;
  let disposed = false;
  const controllers = new Map<string, AbortController>();
  /** Jobs whose generation POST is on its way, its answer (202 or result) not back yet. */
  const submitting = new Set<string>();
  /** Canceled jobs waiting for their POST's answer: when the wait ends, the run is stopped. */
  const cancelTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** How the service answered the last generation POST: 202 (true) or 200 (false); null before any. */
  let answersAsync: boolean | null = null;
  const runs = new Set<Promise<void>>();
  const slotStartedAt = new Map<string, number>();
  const averageMs: Record<MediaKind, number | null> = { video: null, image: null };
  let holds = new Map<string, JobHold>();
  let wakeTimer: ReturnType<typeof setTimeout> | null = null;
  let offline: OfflineState | null = null;
  let probeTimer: ReturnType<typeof setTimeout> | null = null;
  let idleWaiters: (() => void)[] = [];

  const emit = (event: QueueEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's bug must not break the queue.
    }
  };

  // The journal is the truth on disk; this mirror of it saves re-reading every row on each pump.
  const jobs = new Map<string, Job>(journal.all().map((j) => [j.id, j]));
  /**
   * The slot counts and estimates the holds read, computed once per turn while no job changes:
   * listing N jobs asks for N holds, which must not cost N passes over the queue.
   */
  let slotCache: QueueStats | null = null;
  const remember = (job: Job): Job => {
    jobs.set(job.id, job);
    slotCache = null;
    return job;
  };
  const ordered = (): Job[] =>
    [...jobs.values()].sort(
      (a, b) =>
        Number(a.state !== 'queued') - Number(b.state !== 'queued') ||
        a.position - b.position ||
        a.createdAt - b.createdAt,
    );
  const unfinished = (): Job[] => ordered().filter((j) => !isFinished(j.state));
  let pumpScheduled = false;
  /** Many changes in one turn (a batch, a burst of finishes) cost one scheduling pass. */
  const schedulePump = (): void => {
    if (pumpScheduled) return;
    pumpScheduled = true;
    queueMicrotask(() => {
      pumpScheduled = false;
      pump();
    });
  };
  // Progress re-emits the job (`{type:'job'}`); listeners read it with progress(id).
  const progress = new Map<string, JobProgress>();
  const progressEmittedAt = new Map<string, number>();
  const progressTimers = new Map<string, ReturnType<typeof setTimeout>>();
  const clearProgressTimer = (id: string): void => {
    const timer = progressTimers.get(id);
    if (timer) clearTimeout(timer);
    progressTimers.delete(id);
  };
  const forgetProgress = (id: string): void => {
    clearProgressTimer(id);
    progress.delete(id);
    progressEmittedAt.delete(id);
  };
  function emitProgress(id: string): void {
    clearProgressTimer(id);
    progressEmittedAt.set(id, clock.now());
    const job = jobs.get(id);
    if (job && !disposed) emit({ type: 'job', job });
  }
  function reportProgress(id: string, key: 'upload' | 'download', value: TransferProgress): void {
    // A canceled job's transfer may still report while it unwinds: it is no longer news.
    if (disposed || controllers.get(id)?.signal.aborted) return;
    const current = progress.get(id) ?? NO_PROGRESS;
    // Phases that change nothing the UI shows (the uploader's "completing" then "done") are not news.
    if (current[key]?.done === value.done && current[key]?.total === value.total) return;
    progress.set(id, { ...current, [key]: value });
    const complete = value.total !== null && value.done >= value.total;
    const since = clock.now() - (progressEmittedAt.get(id) ?? -Infinity);
    if (complete || since >= progressIntervalMs) {
      emitProgress(id);
    } else if (!progressTimers.has(id)) {
      // Trailing edge: the latest value goes out when the interval is over.
      const timer = setTimeout(() => emitProgress(id), progressIntervalMs - since);
      timer.unref?.();
      progressTimers.set(id, timer);
    }
  }

  /** A poll's news: re-emitted at once (polls are seconds apart, so there is nothing to throttle). */
  function reportGeneration(id: string, generation: Generation): void {
    if (disposed || controllers.get(id)?.signal.aborted) return;
    const current = progress.get(id) ?? NO_PROGRESS;
    progress.set(id, {
      ...current,
      generation: {
        id: generation.id,
        step: generation.status,
        queuePosition: generation.queuePosition ?? null,
        progress: generation.progress ?? null,
      },
    });
    emitProgress(id);
  }

  /** A 429 while following the generation: the job says what it waits for, and until when. */
  function reportWait(id: string, notice: { ms: number; what: string }): void {
    if (disposed || controllers.get(id)?.signal.aborted) return;
    const current = progress.get(id) ?? NO_PROGRESS;
    const generation = current.generation ?? {
      id: jobs.get(id)?.generationId ?? '',
      step: 'queued' as const,
      queuePosition: null,
      progress: null,
    };
    progress.set(id, {
      ...current,
      generation: { ...generation, wait: { what: notice.what, until: clock.now() + notice.ms } },
    });
    emitProgress(id);
  }

  /** Cancels on the service too; best effort (a final or unknown generation has nothing to cancel). */
  function cancelRemote(generationId: string): void {
    if (!api.cancelGeneration) return;
    api.cancelGeneration(generationId).catch(() => {
      // The service finishes or forgets it on its own; the job is canceled here either way.
    });
  }

  const view = (): SchedulerView => ({
    now: clock.now(),
    paused,
    jobs: unfinished(),
    limits,
    rateLimit: api.rateLimit,
    offline,
  });
  const stats = (): QueueStats => queueStats(view(), slotStartedAt, averageMs);

  /**
   * Why a queued job waits, in the order the creator can act on: its own schedule, the service,
   * then the slots. Counts only (no sort), since every job event asks it.
   */
  function holdOf(job: Job, slots?: QueueStats): JobHold | null {
    if (job.state !== 'queued') return null;
    const now = clock.now();
    // The creator's own schedule and the service come first; then a budget (holdFor), then the slots.
    const own = startHold(job, { now, offline }) ?? holds.get(job.id) ?? null;
    if (own) return own;
    if (slots) return slotHold(job, slots);
    if (!slotCache) {
      const open = [...jobs.values()].filter((j) => !isFinished(j.state));
      slotCache = queueStats({ now, paused, jobs: open, limits, rateLimit: api.rateLimit }, slotStartedAt, averageMs);
      // Time moves the estimates: the next turn computes them again.
      queueMicrotask(() => (slotCache = null));
    }
    return slotHold(job, slotCache);
  }

  /**
   * A queued job whose reason to wait changed without an event of its own (the jobs before it took
   * the last slots, or one freed) is announced again, so its row says why it waits. By reason
   * only: a slot's estimate moves with every pass, and the stats carry it.
   */
  const announcedHold = new Map<string, JobHold['reason'] | null>();
  function announceHoldChanges(slots: QueueStats): void {
    for (const job of jobs.values()) {
      if (job.state !== 'queued') {
        announcedHold.delete(job.id);
        continue;
      }
      const reason = holdOf(job, slots)?.reason ?? null;
      if ((announcedHold.get(job.id) ?? null) === reason) continue;
      announcedHold.set(job.id, reason);
      emit({ type: 'job', job });
    }
  }

  /** Every queued job's hold changed (the service went away, came back, or the next probe moved). */
  function announceQueued(): void {
    for (const job of jobs.values()) if (job.state === 'queued') emit({ type: 'job', job });
    emit({ type: 'stats', stats: stats() });
  }

  /**
   * The service could not be reached. Jobs wait for it rather than fail; a probe (GET /usage)
   * asks again after a backoff. Called before the job that met it returns to the queue, so that
   * job's event already says "Waiting for the service".
   */
  function goOffline(): void {
    if (disposed || offline) return;
    const now = clock.now();
    offline = { since: now, failures: 0, nextProbeAt: now + probeDelayMs(0, offlineProbeMs, offlineProbeMaxMs) };
    armProbe();
    announceQueued();
  }

  function armProbe(): void {
    if (probeTimer) clearTimeout(probeTimer);
    probeTimer = null;
    if (!offline || disposed) return;
    probeTimer = setTimeout(() => void probe(), Math.max(0, offline.nextProbeAt - clock.now()));
    probeTimer.unref?.();
  }

  let probing = false;
  async function probe(): Promise<void> {
    if (!offline || disposed || probing) return;
    probing = true;
    try {
      const usage = await api.getUsage();
      if (!options.limits) limits = concurrencyLimits(usage);
      slotCache = null;
      backOnline();
    } catch (error) {
      if (disposed || !offline) return;
      // Any answer at all (even a refusal) means the service is there: its own errors reach the jobs.
      if (!isUnreachable(error)) return backOnline();
      const failures = offline.failures + 1;
      offline = {
        ...offline,
        failures,
        nextProbeAt: clock.now() + probeDelayMs(failures, offlineProbeMs, offlineProbeMaxMs),
      };
      armProbe();
      announceQueued();
    } finally {
      probing = false;
    }
  }

  function backOnline(): void {
    if (!offline) return;
    offline = null;
    if (probeTimer) clearTimeout(probeTimer);
    probeTimer = null;
    announceQueued();
    schedulePump();
  }

  /**
   * A job met an unreachable service before the service accepted anything: back to the queue
   * with its Idempotency-Key kept (journal), so the later submit is the same request and a
   * service that did get it answers with the first result instead of generating twice.
   */
  function waitForService(job: Job, detail: string, signal: AbortSignal): void {
    goOffline();
    move(job.id, 'queued', { notBefore: null, generationId: null }, `service unreachable: ${detail}`, signal);
  }

  /** Journal first, then everything else: the only way a job changes state. */
  function move(id: string, to: JobState, patch: JobPatch = {}, detail?: string, signal?: AbortSignal): Job {
    if (signal?.aborted) throw new Stopped();
    const before = jobs.get(id) ?? journal.get(id);
    const job = remember(journal.transition(id, to, patch, detail));
    if (to === 'queued') forgetProgress(id);
    else if (progressTimers.has(id) && (to === 'done' || to === 'failed' || to === 'canceled')) clearProgressTimer(id);
    if (before && holdsSlot(before.state) && !holdsSlot(to)) releaseSlot(job);
    if (!holdsSlot(before?.state ?? 'queued') && holdsSlot(to)) slotStartedAt.set(id, clock.now());
    emit({ type: 'job', job });
    return job;
  }

  function releaseSlot(job: Job): void {
    const startedAt = slotStartedAt.get(job.id);
    slotStartedAt.delete(job.id);
    if (startedAt === undefined || job.state === 'queued' || job.state === 'canceled' || job.state === 'failed') return;
    const took = clock.now() - startedAt;
    const prev = averageMs[job.kind];
    averageMs[job.kind] = prev === null ? took : prev * 0.7 + took * 0.3;
  }

  function pump(): void {
    if (!started || disposed) return;
    const v = view();
    for (const job of startable(v)) launch(job.id, (signal) => runJob(job.id, signal));
    if (wakeTimer) clearTimeout(wakeTimer);
    wakeTimer = null;
    const wake = nextWakeAt(v);
    if (wake !== null) {
      wakeTimer = setTimeout(pump, Math.max(10, wake - clock.now()));
      wakeTimer.unref?.();
    }
    // After the launches, so the UI sees the slots they took.
    const after = stats();
    announceHoldChanges(after);
    emit({ type: 'stats', stats: after });
    if (controllers.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** The scheduler's picks, minus held jobs; a job whose hold changed is announced. */
  function startable(v: SchedulerView): Job[] {
    if (!options.holdFor) return selectJobsToStart(v);
    const picked = selectJobsToStartWithHolds(v, options.holdFor);
    const before = holds;
    holds = picked.holds;
    for (const id of new Set([...before.keys(), ...holds.keys()])) {
      const job = jobs.get(id);
      if (job && before.get(id)?.message !== holds.get(id)?.message) emit({ type: 'job', job });
    }
    return picked.start;
  }

  function launch(id: string, body: (signal: AbortSignal) => Promise<void>): void {
    const controller = new AbortController();
    controllers.set(id, controller);
    const run = (async () => {
      try {
        await body(controller.signal);
      } catch (error) {
        if (!(error instanceof Stopped) && !(error instanceof JobTransitionError) && !controller.signal.aborted) {
          const info = errorInfo(error);
          try {
            move(id, 'failed', { error: { code: info.code, message: info.message } });
          } catch {
            // Already finished some other way.
          }
        }
      } finally {
        controllers.delete(id);
        const timer = cancelTimers.get(id);
        if (timer) clearTimeout(timer);
        cancelTimers.delete(id);
      }
    })();
    runs.add(run);
    void run.finally(() => {
      runs.delete(run);
      schedulePump();
    });
  }

  const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Stopped());
      const t = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(t);
        reject(new Stopped());
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });

  /** The generation call, with the POST's flight marked for cancel (see cancelGraceMs). */
  async function callGenerate(job: Job, signal: AbortSignal) {
    submitting.add(job.id);
    const answer = { accepted: false };
    try {
      const response = await callGenerateOnce(job, signal, answer);
      // A result without a 202 first: the service has no asynchronous mode.
      if (!answer.accepted) answersAsync = false;
      return response;
    } finally {
      submitting.delete(job.id);
    }
  }

  function callGenerateOnce(job: Job, signal: AbortSignal, answer: { accepted: boolean }) {
    const opts: GenerationCallOptions = {
      idempotencyKey: job.idempotencyKey ?? randomUUID(),
      signal,
      timeoutMs: generationTimeoutMs,
      onAccepted: (generation) => {
        answer.accepted = true;
        answersAsync = true;
        submitting.delete(job.id);
        // Written before the first poll: from now on a restart polls this id, never submits again.
        const current = jobs.get(job.id);
        if (current && current.state === 'generating') {
          remember(journal.update(job.id, { generationId: generation.id }));
        } else if (current?.state === 'canceled' || signal.aborted) {
          // Canceled while the POST was on its way: the service has it now, so cancel it there,
          // then stop following it.
          cancelRemote(generation.id);
          controllers.get(job.id)?.abort();
        }
      },
      onUpdate: (generation) => reportGeneration(job.id, generation),
      onWait: (notice) => reportWait(job.id, notice),
    };
    if (job.variationOf) {
      if (!api.createVariations) {
        throw new ServiceError('invalid_request_error', 'This service cannot make variations');
      }
      const r = job.request;
      return api.createVariations(
        {
          media_id: job.variationOf,
          n: typeof r.n === 'number' ? r.n : 1,
          ...(r.prompt ? { prompt: r.prompt } : {}),
          ...(r.seed !== undefined ? { seed: r.seed } : {}),
          ...(r.routing ? { routing: r.routing } : {}),
          ...(r.provider ? { provider: r.provider } : {}),
        },
        opts,
      );
    }
    return job.kind === 'video' ? api.generateVideo(job.request, opts) : api.generateImage(job.request, opts);
  }

  /** After a restart: the service has this job's generation, so follow it instead of submitting. */
  async function resume(job: Job, signal: AbortSignal): Promise<void> {
    if (!api.waitForGeneration || !job.generationId) return reconcile(job, signal);
    for (let attempt = 0; ; attempt++) {
      try {
        const final = await api.waitForGeneration(job.generationId, {
          signal,
          timeoutMs: generationTimeoutMs,
          onUpdate: (generation) => reportGeneration(job.id, generation),
          onWait: (notice) => reportWait(job.id, notice),
        });
        return await settle(job, final, signal, 'generation');
      } catch (error) {
        if (signal.aborted) throw new Stopped();
        const info = errorInfo(error);
        // The service is gone: wait for it; the repeat (same key) finds this generation again.
        if (isUnreachable(error)) return waitForService(job, info.message, signal);
        // A service that lost the generation (or never had async mode): find the result another way.
        if (info.code === 'not_found_error') return reconcile(job, signal);
        if ((!AMBIGUOUS.has(info.code) && info.code !== 'rate_limit_exceeded') || attempt >= 4) throw error;
        await sleep(reconcilePollMs, signal);
      }
    }
  }

  /** A final generation record: its items, or the job's failure or cancelation. */
  async function settle(
    job: Job,
    final: Generation,
    signal: AbortSignal,
    recoveredBy?: JobResult['recoveredBy'],
  ): Promise<void> {
    if (final.status === 'canceled') {
      move(job.id, 'canceled', { generationId: null, idempotencyKey: null }, 'canceled on the service', signal);
      return;
    }
    const response = generationResult(final);
    await finish(
      job,
      { items: response.data, price: response.price, ...(recoveredBy ? { recoveredBy } : {}) },
      signal,
      routeFromResponse(job.route, response),
    );
  }

  async function runJob(id: string, signal: AbortSignal): Promise<void> {
    let job = jobs.get(id)!;
    if (job.result) return download(move(id, 'downloading', {}, 'retry download', signal), signal);
    let request = job.request;
    if (job.startFrame && !('image_url' in request && request.image_url)) {
      job = move(id, 'uploading', { notBefore: null }, undefined, signal);
      if (!options.uploader)
        throw new ServiceError('invalid_request_error', 'No uploader is configured for start frames');
      let url: string;
      try {
        ({ url } = await options.uploader.upload(
          { path: job.startFrame! },
          // The uploader reports 0 of 0 while it checks the file: the size is not known yet.
          {
            signal,
            onProgress: (p) => reportProgress(id, 'upload', { done: p.sent, total: p.total > 0 ? p.total : null }),
          },
        ));
      } catch (error) {
        if (signal.aborted || !isUnreachable(error)) throw error;
        return waitForService(job, errorInfo(error).message, signal);
      }
      request = { ...request, image_url: url };
    }
    // Written before the request is sent: after a crash we know it may have reached the service.
    // A job back from "Waiting for the service" keeps its key: never two generations of one job.
    const again = job.idempotencyKey !== null;
    job = move(
      id,
      'generating',
      {
        request,
        idempotencyKey: job.idempotencyKey ?? randomUUID(),
        submittedAt: again && job.submittedAt !== null ? job.submittedAt : clock.now(),
        attempts: job.attempts + 1,
        notBefore: null,
        error: null,
      },
      undefined,
      signal,
    );
    await generate(job, signal);
  }

  async function generate(job: Job, signal: AbortSignal): Promise<void> {
    let response;
    try {
      response = await callGenerate(job, signal);
    } catch (error) {
      if (signal.aborted || canceled(job.id)) throw new Stopped();
      const info = errorInfo(error);
      // Canceled on the service (another client, the CLI): the job ends the same way.
      if (info.code === 'canceled') {
        move(job.id, 'canceled', { generationId: null, idempotencyKey: null }, info.message, signal);
        return;
      }
      if (info.code === 'rate_limit_exceeded') {
        const wait = info.retryAfter !== null ? info.retryAfter * 1000 : defaultRetryAfterMs;
        move(
          job.id,
          'queued',
          { notBefore: clock.now() + wait, idempotencyKey: null, generationId: null },
          `rate limited: ${info.message}`,
          signal,
        );
        return;
      }
      // No connection at all: nothing reached the service. Wait for it (same key kept).
      if (isUnreachable(error)) return waitForService(job, info.message, signal);
      // The request may have reached the service: find out instead of guessing. With a
      // generation id (the 202 came) the service has it for sure: follow it.
      const known = jobs.get(job.id);
      if (AMBIGUOUS.has(info.code) && known?.generationId) return resume(known, signal);
      if (AMBIGUOUS.has(info.code)) return reconcile(job, signal);
      move(job.id, 'failed', { error: { code: info.code, message: info.message } }, undefined, signal);
      return;
    }
    const route = routeFromResponse(job.route, response);
    if (canceled(job.id)) {
      // Canceled while a service without asynchronous mode finished it: it is charged, so the
      // canceled job keeps the result (the ledger counts it; Retry only downloads it).
      remember(journal.update(job.id, { result: { items: response.data, price: response.price }, route }));
      emit({ type: 'job', job: jobs.get(job.id)! });
      throw new Stopped();
    }
    await finish(job, { items: response.data, price: response.price }, signal, route);
  }

  const canceled = (id: string): boolean => jobs.get(id)?.state === 'canceled';

  /** `route`: what the response says the job ran on and cost (docs/workflows.md), replacing the preview's. */
  async function finish(job: Job, result: JobResult, signal: AbortSignal, route?: JobRoute): Promise<void> {
    const patch = { result, idempotencyKey: null, generationId: null, ...(route ? { route } : {}) };
    if (!options.downloader) {
      move(job.id, 'done', patch, undefined, signal);
      return;
    }
    await download(move(job.id, 'downloading', patch, undefined, signal), signal);
  }

  async function download(job: Job, signal: AbortSignal): Promise<void> {
    const items = job.result?.items ?? [];
    const paths = [...job.downloads];
    // Bytes of the items already saved in this run; the bar covers them plus the current one.
    let before = 0;
    for (const item of items.slice(paths.length)) {
      let last: TransferProgress = { done: 0, total: null };
      const { path, bytes } = await options.downloader!.download({
        item,
        signal,
        context: { jobId: job.id, price: job.result?.price ?? undefined },
        onProgress: (p) => {
          last = { done: before + p.received, total: p.total === null ? null : before + p.total };
          reportProgress(job.id, 'download', last);
        },
      });
      if (signal.aborted) throw new Stopped();
      before = bytes ?? last.total ?? last.done;
      paths.push(path);
      remember(journal.update(job.id, { downloads: paths }));
    }
    // A file that was already on disk reports nothing: the bar still ends full.
    if (paths.length > job.downloads.length) reportProgress(job.id, 'download', { done: before, total: before });
    move(job.id, 'done', { downloads: paths }, undefined, signal);
  }

  /** A job that may have been submitted but whose answer we never saw. Never blindly resubmitted. */
  async function reconcile(job: Job, signal: AbortSignal): Promise<void> {
    if (useIdempotency && job.idempotencyKey) {
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          // Same key, same body: the service answers with the first result (or waits for it).
          const response = await callGenerate(job, signal);
          return finish(
            job,
            { items: response.data, price: response.price, recoveredBy: 'idempotency' },
            signal,
            routeFromResponse(job.route, response),
          );
        } catch (error) {
          if (signal.aborted) throw new Stopped();
          const info = errorInfo(error);
          if (info.code === 'rate_limit_exceeded') {
            await sleep(info.retryAfter !== null ? info.retryAfter * 1000 : defaultRetryAfterMs, signal);
            continue;
          }
          // The service is gone: the job waits for it and repeats this same request (same key) then.
          if (isUnreachable(error)) return waitForService(job, info.message, signal);
          if (!AMBIGUOUS.has(info.code)) break;
          await sleep(reconcilePollMs, signal);
        }
      }
    }
    for (;;) {
      const found = await findInLibrary(job, signal);
      if (found.length > 0) {
        return finish(job, { items: found, price: itemsPrice(found), recoveredBy: 'library' }, signal);
      }
      if (clock.now() >= (job.submittedAt ?? 0) + reconcileWindowMs) {
        move(
          job.id,
          'failed',
          {
            error: {
              code: 'interrupted',
              message:
                'The app stopped while this was generating and no result turned up in the library. Retry to submit it again.',
            },
          },
          undefined,
          signal,
        );
        return;
      }
      await sleep(reconcilePollMs, signal);
    }
  }

  /** Items of /media with the same prompt and model, created after the submit, not claimed by another job. */
  async function findInLibrary(job: Job, signal: AbortSignal): Promise<GeneratedItem[]> {
    try {
      // Removed jobs' items stay claimed: they were someone else's result.
      return await findJobItems(api, job, {
        since: (job.submittedAt ?? 0) - skewMs,
        claimed: journal.claimedItemIds(job.id),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw new Stopped();
      if (AMBIGUOUS.has(errorInfo(error).code) || errorInfo(error).code === 'rate_limit_exceeded') return [];
      throw error;
    }
  }

  function enqueueMany(inputs: EnqueueInput[], batchId: string | null): Job[] {
    if (disposed) throw new Error('The job queue is shut down');
    const created = journal.create(
      inputs.map((i) => ({
        kind: i.kind,
        request: i.request,
        startFrame: i.startFrame ?? null,
        batchId,
        variationOf: i.variationOf ?? null,
        route: i.route ?? null,
        submitAt: i.submitAt ?? null,
      })),
    );
    for (const job of created) emit({ type: 'job', job: remember(job) });
    schedulePump();
    return created;
  }

  return {
    async start() {
      if (started) return;
      started = true;
      for (const job of ordered()) {
        if (job.state === 'uploading') move(job.id, 'queued', {}, 'interrupted during upload');
        else if (job.state === 'generating') {
          slotStartedAt.set(job.id, clock.now());
          // Async mode: poll the generation the journal names; never submit it again.
          launch(job.id, (signal) => (job.generationId ? resume(job, signal) : reconcile(job, signal)));
        } else if (job.state === 'downloading') launch(job.id, (signal) => download(job, signal));
      }
      if (!options.limits) {
        try {
          limits = concurrencyLimits(await api.getUsage());
        } catch (error) {
          // An older service: stay at one of each until we know the tier. Unreachable: the
          // queued jobs wait for it, and the probe learns the limits when it is back.
          if (isUnreachable(error)) goOffline();
        }
      }
      pump();
    },
    enqueue: (input) => enqueueMany([input], null)[0]!,
    enqueueBatch(input, count, opts = {}) {
      const n = Math.max(1, Math.min(100, Math.floor(count)));
      const base = opts.seed ?? input.request.seed ?? randomInt(0, MAX_SEED - n);
      const batchId = randomUUID();
      return enqueueMany(
        Array.from({ length: n }, (_, i) => ({ ...input, request: { ...input.request, seed: (base + i) % MAX_SEED } })),
        batchId,
      );
    },
    cancel(id) {
      const job = jobs.get(id) ?? null;
      if (!job || isFinished(job.state)) return job;
      const canceledJob = move(id, 'canceled', { generationId: null }, 'canceled by the user');
      const controller = controllers.get(id);
      if (controller && submitting.has(id) && api.cancelGeneration) {
        // The POST is on its way and the service may be rendering already: dropping the request
        // would leave that generation running and charged, unseen. Its 202 names it, and
        // onAccepted cancels it with DELETE. Only a service known to answer synchronously is hung
        // up on: waiting for its answer would only wait for the render and its charge.
        if (answersAsync === false) {
          const timer = setTimeout(() => controller.abort(), cancelGraceMs);
          timer.unref?.();
          cancelTimers.set(id, timer);
        }
      } else controller?.abort();
      if (job.generationId) cancelRemote(job.generationId);
      schedulePump();
      return canceledJob;
    },
    retry(id, result) {
      const job = jobs.get(id) ?? null;
      if (!job || (job.state !== 'failed' && job.state !== 'canceled')) return job;
      // A canceled job whose POST is still being answered (cancelGraceMs) has a run to end first.
      if (controllers.has(id)) throw new JobConflictError('This job is still stopping; retry it in a moment.');
      const position = Math.max(0, ...[...jobs.values()].map((j) => j.position)) + 1;
      const again = move(
        id,
        'queued',
        {
          error: null,
          notBefore: null,
          idempotencyKey: null,
          generationId: null,
          position,
          ...(result ? { result } : {}),
        },
        result ? 'recover' : 'retry',
      );
      schedulePump();
      return again;
    },
    remove(id) {
      const job = jobs.get(id);
      if (!job) return null;
      if (!isFinished(job.state)) {
        throw new JobConflictError(`This job is ${job.state}; cancel it first, then remove it.`);
      }
      journal.remove(id);
      jobs.delete(id);
      forgetProgress(id);
      emit({ type: 'removed', id });
      return true;
    },
    duplicate(id) {
      const job = jobs.get(id);
      if (!job) return null;
      return enqueueMany(
        [
          {
            kind: job.kind,
            request: job.request,
            startFrame: job.startFrame,
            variationOf: job.variationOf,
            route: job.route,
          },
        ],
        null,
      )[0]!;
    },
    move(id, index) {
      const queued = ordered().filter((j) => j.state === 'queued');
      const from = queued.findIndex((j) => j.id === id);
      if (from < 0) return;
      const [job] = queued.splice(from, 1);
      queued.splice(Math.max(0, Math.min(queued.length, index)), 0, job!);
      const base = Math.min(...queued.map((j) => j.position));
      // Write every new position before announcing any: a listener that reads the whole queue
      // while handling one event (to show "position N") must not see two jobs at one place.
      const moved = queued.flatMap((j, i) =>
        j.position !== base + i ? [remember(journal.update(j.id, { position: base + i }))] : [],
      );
      for (const job of moved) emit({ type: 'job', job });
      schedulePump();
    },
    // At once, not on the next microtask: the caller answers with stats() right after, and those
    // must already count the jobs this resume starts (the "Running 0 after Resume" race).
    pause() {
      paused = true;
      pump();
    },
    resume() {
      paused = false;
      pump();
    },
    schedule(id, at) {
      const job = jobs.get(id);
      if (!job) return null;
      if (job.state !== 'queued')
        throw new JobConflictError(`This job is ${job.state}; only a queued job can be scheduled.`);
      const updated = remember(journal.update(id, { submitAt: at }));
      emit({ type: 'job', job: updated });
      if (at === null && offline) {
        // "Submit now" while waiting for the service: ask it now rather than at the next probe.
        offline = { ...offline, nextProbeAt: clock.now() };
        armProbe();
      }
      schedulePump();
      return updated;
    },
    offline: () => offline,
    list: () => ordered(),
    get: (id) => jobs.get(id) ?? null,
    progress(id) {
      const job = jobs.get(id);
      const live = progress.get(id) ?? NO_PROGRESS;
      const hold = job?.state === 'queued' ? holdOf(job) : null;
      return hold ? { ...live, hold } : live;
    },
    stats,
    holdOf: (id) => {
      const job = jobs.get(id);
      return job ? holdOf(job) : null;
    },
    recheck: schedulePump,
    idle() {
      const busy =
        controllers.size > 0 ||
        selectJobsToStart(view()).length > 0 ||
        unfinished().some((j) => j.state === 'queued' && !holds.has(j.id) && !paused);
      if (!busy) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const check = (): void => {
          // A held job (holdFor) waits for the creator, not for the queue.
          const stillQueued = unfinished().some((j) => j.state === 'queued' && !holds.has(j.id)) && !paused;
          if (controllers.size === 0 && !stillQueued) resolve();
          else idleWaiters.push(check);
        };
        idleWaiters.push(check);
      });
    },
    async dispose() {
      disposed = true;
      if (wakeTimer) clearTimeout(wakeTimer);
      if (probeTimer) clearTimeout(probeTimer);
      for (const id of [...progressTimers.keys()]) clearProgressTimer(id);
      for (const c of controllers.values()) c.abort();
      await Promise.allSettled([...runs]);
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    },
  };
}
