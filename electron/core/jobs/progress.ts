import type { Generation } from '../../../shared/api/index.ts';
import type { Clock } from '../../../shared/clock.ts';
import type { WaitNotice } from '../api/retry.ts';
import type { JobHold } from './waiting.ts';

/** A wait before something is tried again: what waits, until when (epoch ms), and why. */
export interface ProgressWait {
  reason?: WaitNotice['reason'];
  what: string;
  until: number;
  message?: string;
}

/** Bytes moved so far for one job; `total` null while unknown. */
export interface TransferProgress {
  done: number;
  total: number | null;
  /** Set while a broken transfer waits to be tried again (core/api/retry.ts). */
  wait?: ProgressWait | null;
}

/** Where an asynchronous generation is on the service, from its last poll. */
export interface GenerationProgress {
  id: string;
  step: Generation['status'];
  queuePosition: number | null;
  /** 0–1 when the provider reports progress. */
  progress: number | null;
  /** Set while the client waits to send a request again (a 429's Retry-After, a backoff). */
  wait?: ProgressWait | null;
}

/** A job's transfers, in memory only (a restart forgets them; the journal holds the outcome). */
export interface JobProgress {
  upload: TransferProgress | null;
  /** Over the job's items: what the finished ones weighed plus the running one. */
  download: TransferProgress | null;
  /** Asynchronous mode only: the service's step and queue position (the next poll refills it after a restart). */
  generation?: GenerationProgress | null;
  /** Why a queued job waits (scheduled, the service unreachable, every slot busy); computed when asked. (docs/workflows.md) */
  hold?: JobHold | null;
}

function waitOf(notice: WaitNotice, now: number): ProgressWait {
  return {
    reason: notice.reason,
    what: notice.what,
    until: now + notice.ms,
    ...(notice.message === undefined ? {} : { message: notice.message }),
  };
}

export const NO_PROGRESS: JobProgress = Object.freeze({ upload: null, download: null });

export interface ProgressTracker {
  get(id: string): JobProgress;
  transfer(id: string, key: 'upload' | 'download', value: TransferProgress): void;
  generation(id: string, generation: Generation): void;
  /** A wait while the job generates (a 429, a backoff): what the job waits for, and until when. */
  wait(id: string, notice: WaitNotice, generationId: string | null): void;
  /** A wait before a broken upload or download is tried again. */
  transferWait(id: string, key: 'upload' | 'download', notice: WaitNotice): void;
  /** Stops a pending trailing emit (the job finished). */
  settle(id: string): void;
  forget(id: string): void;
  dispose(): void;
}

/**
 * The jobs' live progress. Progress re-emits the job (`announce`); listeners read it with
 * progress(id). Transfers re-emit at most once per `intervalMs`, so a fast transfer does not flood
 * the UI; the last report of a transfer (done = total) always goes out. `live(id)` is false once
 * the job's run was canceled or the queue disposed: a transfer that still reports while it
 * unwinds is no longer news.
 */
export function createProgressTracker(deps: {
  clock: Clock;
  intervalMs: number;
  live: (id: string) => boolean;
  announce: (id: string) => void;
}): ProgressTracker {
  const progress = new Map<string, JobProgress>();
  const emittedAt = new Map<string, number>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const clearTimer = (id: string): void => {
    const timer = timers.get(id);
    if (timer) clearTimeout(timer);
    timers.delete(id);
  };
  const emitNow = (id: string): void => {
    clearTimer(id);
    emittedAt.set(id, deps.clock.now());
    deps.announce(id);
  };
  const set = (id: string, patch: Partial<JobProgress>): void => {
    progress.set(id, { ...(progress.get(id) ?? NO_PROGRESS), ...patch });
  };
  return {
    get: (id) => progress.get(id) ?? NO_PROGRESS,
    transfer(id, key, value) {
      if (!deps.live(id)) return;
      const current = progress.get(id) ?? NO_PROGRESS;
      // Phases that change nothing the UI shows (the uploader's "completing" then "done") are not news.
      if (current[key]?.done === value.done && current[key]?.total === value.total) return;
      set(id, { [key]: value });
      const complete = value.total !== null && value.done >= value.total;
      const since = deps.clock.now() - (emittedAt.get(id) ?? -Infinity);
      if (complete || since >= deps.intervalMs) {
        emitNow(id);
      } else if (!timers.has(id)) {
        // Trailing edge: the latest value goes out when the interval is over.
        const timer = setTimeout(() => emitNow(id), deps.intervalMs - since);
        timer.unref?.();
        timers.set(id, timer);
      }
    },
    // A poll's news: re-emitted at once (polls are seconds apart, so there is nothing to throttle).
    generation(id, generation) {
      if (!deps.live(id)) return;
      set(id, {
        generation: {
          id: generation.id,
          step: generation.status,
          queuePosition: generation.queuePosition ?? null,
          progress: generation.progress ?? null,
        },
      });
      emitNow(id);
    },
    wait(id, notice, generationId) {
      if (!deps.live(id)) return;
      const generation = progress.get(id)?.generation ?? {
        id: generationId ?? '',
        step: 'queued' as const,
        queuePosition: null,
        progress: null,
      };
      set(id, { generation: { ...generation, wait: waitOf(notice, deps.clock.now()) } });
      emitNow(id);
    },
    transferWait(id, key, notice) {
      if (!deps.live(id)) return;
      const transfer = progress.get(id)?.[key] ?? { done: 0, total: null };
      set(id, { [key]: { ...transfer, wait: waitOf(notice, deps.clock.now()) } });
      emitNow(id);
    },
    settle(id) {
      if (timers.has(id)) clearTimer(id);
    },
    forget(id) {
      clearTimer(id);
      progress.delete(id);
      emittedAt.delete(id);
    },
    dispose() {
      for (const id of [...timers.keys()]) clearTimer(id);
    },
  };
}
