/**
 * The job queue's state in one owner: every field is private, and its methods are the only
 * writers. The runner (runtime.ts, runner.ts, pump.ts) and the queue's API (queue.ts) read it
 * through read-only views and change it only by calling these methods, so each change has one
 * place to look (docs/architecture.md, "The job queue and the API client").
 */
import type { MediaKind } from '../../../shared/api/index.ts';
import { RetryBudget } from '../api/retry.ts';
import type { Clock } from '../../../shared/clock.ts';
import type { HoldCheck } from './holds.ts';
import type { JobJournal } from './journal.ts';
import type { OfflineWatch } from './offline.ts';
import type { GenerationService, JobDownloader, StartFrameUploader } from './ports.ts';
import type { ProgressTracker } from './progress.ts';
import type { KindCounts, QueueStats } from './scheduler.ts';
import type { Job } from './state.ts';
import type { JobHold } from './waiting.ts';

export type QueueEvent =
  { type: 'job'; job: Job } | { type: 'removed'; id: string } | { type: 'stats'; stats: QueueStats };

/** The queue's settings, defaults applied (JobQueueOptions documents each). */
export interface QueueSettings {
  useIdempotency: boolean;
  generationTimeoutMs: number;
  reconcileWindowMs: number;
  reconcilePollMs: number;
  skewMs: number;
  defaultRetryAfterMs: number;
  cancelGraceMs: number;
  /** All of one job's retry waits together, every layer's (docs/architecture.md). */
  retryWaitMs: number;
}

/** What the state is built from: the ports, the settings, and the parts made around it. */
export interface QueueStateParts {
  journal: JobJournal;
  api: GenerationService;
  uploader: StartFrameUploader | undefined;
  downloader: JobDownloader | undefined;
  clock: Clock;
  settings: QueueSettings;
  holdFor: HoldCheck | undefined;
  limits: KindCounts;
  onEvent: ((event: QueueEvent) => void) | undefined;
  /** One scheduling pass over this state (pump.ts). */
  pump: (state: QueueState) => void;
  progress: (state: QueueState) => ProgressTracker;
  offline: (state: QueueState) => OfflineWatch;
}

export class QueueState {
  readonly journal: JobJournal;
  readonly api: GenerationService;
  readonly uploader: StartFrameUploader | undefined;
  readonly downloader: JobDownloader | undefined;
  readonly clock: Clock;
  readonly settings: QueueSettings;
  readonly holdFor: HoldCheck | undefined;
  readonly progress: ProgressTracker;
  readonly offline: OfflineWatch;
  readonly #onEvent: ((event: QueueEvent) => void) | undefined;
  readonly #pump: (state: QueueState) => void;
  /** The journal is the truth on disk; this mirror of it saves re-reading every row on each pump. */
  readonly #jobs: Map<string, Job>;
  readonly #controllers = new Map<string, AbortController>();
  /** Jobs whose generation POST is on its way, its answer (202 or result) not back yet. */
  readonly #submitting = new Set<string>();
  /** Canceled jobs waiting for their POST's answer: when the wait ends, the run is stopped. */
  readonly #cancelTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** How the service answered the last generation POST: 202 (true) or 200 (false); null before any. */
  #answersAsync: boolean | null = null;
  readonly #slotStartedAt = new Map<string, number>();
  readonly #averageMs: Record<MediaKind, number | null> = { video: null, image: null };
  #limits: KindCounts;
  #disposed = false;
  #paused = false;
  #started = false;
  readonly #runs = new Set<Promise<void>>();
  /** The budget's holds (holdFor) from the last pass. */
  #holds = new Map<string, JobHold>();
  #wakeTimer: ReturnType<typeof setTimeout> | null = null;
  #idleWaiters: (() => void)[] = [];
  /**
   * The slot counts and estimates the holds read, computed once per turn while no job changes:
   * listing N jobs asks for N holds, which must not cost N passes over the queue.
   */
  #slotCache: QueueStats | null = null;
  /** The hold reason each queued job was last announced with. */
  readonly #announcedHold = new Map<string, JobHold['reason'] | null>();
  #pumpScheduled = false;
  /** Each unfinished job's retry budget: kept across its waits after a 429, gone when it ends. */
  readonly #retryBudgets = new Map<string, RetryBudget>();

  constructor(parts: QueueStateParts) {
    this.journal = parts.journal;
    this.api = parts.api;
    this.uploader = parts.uploader;
    this.downloader = parts.downloader;
    this.clock = parts.clock;
    this.settings = parts.settings;
    this.holdFor = parts.holdFor;
    this.#limits = parts.limits;
    this.#onEvent = parts.onEvent;
    this.#pump = parts.pump;
    this.#jobs = new Map(parts.journal.all().map((j) => [j.id, j]));
    this.progress = parts.progress(this);
    this.offline = parts.offline(this);
  }

  get jobs(): ReadonlyMap<string, Job> {
    return this.#jobs;
  }
  get controllers(): ReadonlyMap<string, AbortController> {
    return this.#controllers;
  }
  get submitting(): ReadonlySet<string> {
    return this.#submitting;
  }
  get answersAsync(): boolean | null {
    return this.#answersAsync;
  }
  get slotStartedAt(): ReadonlyMap<string, number> {
    return this.#slotStartedAt;
  }
  get averageMs(): Readonly<Record<MediaKind, number | null>> {
    return this.#averageMs;
  }
  get limits(): KindCounts {
    return this.#limits;
  }
  get disposed(): boolean {
    return this.#disposed;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get started(): boolean {
    return this.#started;
  }
  get runs(): ReadonlySet<Promise<void>> {
    return this.#runs;
  }
  get holds(): ReadonlyMap<string, JobHold> {
    return this.#holds;
  }
  get slotCache(): QueueStats | null {
    return this.#slotCache;
  }

  emit(event: QueueEvent): void {
    try {
      this.#onEvent?.(event);
    } catch {
      // A listener's bug must not break the queue.
    }
  }

  /** Mirrors a journal row (and drops the cached slot counts). */
  remember(job: Job): Job {
    this.#jobs.set(job.id, job);
    this.#slotCache = null;
    return job;
  }

  /** The job left the journal. */
  forget(id: string): void {
    this.#jobs.delete(id);
  }

  /** Many changes in one turn (a batch, a burst of finishes) cost one scheduling pass. */
  schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      this.#pump(this);
    });
  }

  /**
   * What the job's retry waits draw from, every layer's (the runner's, the client's inside it,
   * the queue's wait after a 429), so they stay within `retryWaitMs` in all.
   */
  retryBudget(id: string): RetryBudget {
    let budget = this.#retryBudgets.get(id);
    if (!budget) this.#retryBudgets.set(id, (budget = new RetryBudget(this.settings.retryWaitMs)));
    return budget;
  }

  /** The job ended: a retry by the user starts with a whole budget. */
  forgetRetries(id: string): void {
    this.#retryBudgets.delete(id);
  }

  /** The job took one of the tier's slots now. */
  slotTaken(id: string): void {
    this.#slotStartedAt.set(id, this.clock.now());
  }

  /** The job gave its slot back; a finished generation feeds the kind's average duration (the estimates). */
  slotReleased(job: Job): void {
    const startedAt = this.#slotStartedAt.get(job.id);
    this.#slotStartedAt.delete(job.id);
    if (startedAt === undefined || job.state === 'queued' || job.state === 'canceled' || job.state === 'failed') return;
    const took = this.clock.now() - startedAt;
    const prev = this.#averageMs[job.kind];
    this.#averageMs[job.kind] = prev === null ? took : prev * 0.7 + took * 0.3;
  }

  /** A run started for the job; `signal` stops it. */
  runStarted(id: string, controller: AbortController): void {
    this.#controllers.set(id, controller);
  }

  /** The job's run ended: its controller and any cancel wait go. */
  runEnded(id: string): void {
    this.#controllers.delete(id);
    const timer = this.#cancelTimers.get(id);
    if (timer) clearTimeout(timer);
    this.#cancelTimers.delete(id);
  }

  /** A run's promise, tracked so dispose waits for it; the next pump follows its end. */
  track(run: Promise<void>): void {
    this.#runs.add(run);
    void run.finally(() => {
      this.#runs.delete(run);
      this.schedulePump();
    });
  }

  /** A canceled job's POST is hung up on after this timer (cancelGraceMs). */
  cancelAfter(id: string, timer: ReturnType<typeof setTimeout>): void {
    this.#cancelTimers.set(id, timer);
  }

  submitStarted(id: string): void {
    this.#submitting.add(id);
  }

  submitEnded(id: string): void {
    this.#submitting.delete(id);
  }

  /** How the service answered a generation POST: 202 first (true) or the result at once (false). */
  answered(async: boolean): void {
    this.#answersAsync = async;
  }

  setLimits(limits: KindCounts): void {
    this.#limits = limits;
    this.#slotCache = null;
  }

  /** Drops the cached slot counts (the service came back: its limits may have changed). */
  forgetSlots(): void {
    this.#slotCache = null;
  }

  /** Keeps this turn's slot counts; time moves the estimates, so the next turn computes them again. */
  cacheSlots(slots: QueueStats): QueueStats {
    this.#slotCache = slots;
    queueMicrotask(() => (this.#slotCache = null));
    return slots;
  }

  /** The budget's holds of this pass; returns the last pass's. */
  replaceHolds(holds: Map<string, JobHold>): ReadonlyMap<string, JobHold> {
    const before = this.#holds;
    this.#holds = holds;
    return before;
  }

  /** Whether the job's row was last announced with `reason`; records it when not. */
  announceHold(id: string, reason: JobHold['reason'] | null): boolean {
    if ((this.#announcedHold.get(id) ?? null) === reason) return false;
    this.#announcedHold.set(id, reason);
    return true;
  }

  forgetAnnouncedHold(id: string): void {
    this.#announcedHold.delete(id);
  }

  /** The next pass, when something becomes startable later (null: none). */
  setWakeTimer(timer: ReturnType<typeof setTimeout> | null): void {
    if (this.#wakeTimer) clearTimeout(this.#wakeTimer);
    this.#wakeTimer = timer;
  }

  addIdleWaiter(waiter: () => void): void {
    this.#idleWaiters.push(waiter);
  }

  /** The waiters on idle() so far, handed over once. */
  takeIdleWaiters(): (() => void)[] {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    return waiters;
  }

  setPaused(paused: boolean): void {
    this.#paused = paused;
  }

  /** Marks the queue started; false when it already was. */
  markStarted(): boolean {
    if (this.#started) return false;
    this.#started = true;
    return true;
  }

  /** Stops new work: the wake timer goes, every run is aborted; returns the runs to wait for. */
  markDisposed(): Promise<void>[] {
    this.#disposed = true;
    this.setWakeTimer(null);
    for (const c of this.#controllers.values()) c.abort();
    return [...this.#runs];
  }
}
