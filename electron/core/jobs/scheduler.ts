import type { MediaKind } from '../../../shared/api/index.ts';
import { TIERS, UNKNOWN_TIER_CONCURRENCY } from '../../../shared/api/index.ts';
import { startHold } from './waiting.ts';
import type { OfflineState } from './waiting.ts';
import { holdsSlot } from './state.ts';
import type { Job } from './state.ts';

export type KindCounts = Record<MediaKind, number>;

/** What the service last said about the rate window (the client's RateLimitState fits). */
export interface RateWindow {
  remaining: number | null;
  /** Unix seconds. */
  reset: number | null;
}

export interface SchedulerView {
  now: number;
  paused: boolean;
  /** Unfinished jobs, queued ones in queue order. */
  jobs: readonly Job[];
  limits: KindCounts;
  rateLimit: RateWindow | null;
  /** Set while the service is unreachable (waiting.ts): queued jobs wait for it. */
  offline?: OfflineState | null;
}

/** Concurrency per kind: the service's own numbers, else the tier table, else 1. */
export function concurrencyLimits(
  usage: { tier?: string; limits?: { concurrency?: Partial<KindCounts> } } | null,
): KindCounts {
  const c = usage?.limits?.concurrency;
  if (c && typeof c.video === 'number' && typeof c.image === 'number') return { video: c.video, image: c.image };
  const tier = usage?.tier as keyof typeof TIERS | undefined;
  if (tier && tier in TIERS) return { ...TIERS[tier].concurrency };
  return { ...UNKNOWN_TIER_CONCURRENCY };
}

/** Ms until the rate window has room again; 0 when it has room or we know nothing. */
export function rateLimitWaitMs(rate: RateWindow | null, now: number): number {
  if (!rate || rate.remaining === null || rate.remaining > 0 || rate.reset === null) return 0;
  return Math.max(0, rate.reset * 1000 - now);
}

export function runningCounts(jobs: readonly Job[]): KindCounts {
  const counts: KindCounts = { video: 0, image: 0 };
  for (const j of jobs) if (holdsSlot(j.state)) counts[j.kind]++;
  return counts;
}

/**
 * How many requests the last-seen rate window still allows. Its count describes that window only:
 * once the window has reset it says nothing, and a spent window with no reset to wait for would
 * otherwise hold the queue forever (no request goes out, so no response brings fresh numbers);
 * one request then asks the service, whose 429 carries the real wait.
 */
function rateBudget(rate: RateWindow | null, now: number): number {
  if (!rate || rate.remaining === null) return Infinity;
  if (rate.reset !== null && rate.reset * 1000 <= now) return Infinity;
  if (rate.reset === null && rate.remaining <= 0) return 1;
  return rate.remaining;
}

/**
 * The queued jobs to start now, in queue order: per kind up to the free slots, never while the
 * rate window is spent, and no more than the requests the window has left. Pure.
 */
export function selectJobsToStart(view: SchedulerView): Job[] {
  if (view.paused || rateLimitWaitMs(view.rateLimit, view.now) > 0) return [];
  const free: KindCounts = { video: 0, image: 0 };
  const running = runningCounts(view.jobs);
  for (const kind of ['video', 'image'] as const) free[kind] = Math.max(0, view.limits[kind] - running[kind]);
  let budget = rateBudget(view.rateLimit, view.now);
  const picked: Job[] = [];
  for (const job of view.jobs) {
    if (budget <= 0) break;
    if (job.state !== 'queued' || (job.notBefore !== null && job.notBefore > view.now)) continue;
    if (startHold(job, view)) continue;
    if (free[job.kind] <= 0) continue;
    free[job.kind]--;
    budget--;
    picked.push(job);
  }
  return picked;
}

/**
 * When something may become startable without any other event: a rate reset, a 429 wait ending or
 * a scheduled time coming. (The offline probe has its own timer in the queue.)
 */
export function nextWakeAt(view: SchedulerView): number | null {
  const candidates: number[] = [];
  const wait = rateLimitWaitMs(view.rateLimit, view.now);
  if (wait > 0) candidates.push(view.now + wait);
  for (const j of view.jobs) {
    if (j.state !== 'queued') continue;
    if (j.notBefore !== null && j.notBefore > view.now) candidates.push(j.notBefore);
    if (j.submitAt && j.submitAt > view.now) candidates.push(j.submitAt);
  }
  return candidates.length ? Math.min(...candidates) : null;
}

export interface QueueStats {
  running: KindCounts;
  limits: KindCounts;
  queued: number;
  paused: boolean;
  /** Epoch ms when the rate window has room again, or null when it has room now. */
  rateLimitedUntil: number | null;
  /**
   * Per kind, the epoch ms when a job of that kind could next start: now when a slot is free,
   * the rate window's reset when it is spent, else when the oldest running job is expected to end.
   * Null when that cannot be estimated yet.
   */
  nextSlotAt: Record<MediaKind, number | null>;
  /**
   * The kind whose slot the queue waits for: the kind of the first queued job that nothing else
   * holds, else a kind with every slot busy (video first), else null (a slot of each kind is free).
   */
  nextKind: MediaKind | null;
  /** Epoch ms of the next probe while the service is unreachable; null when it is reachable. */
  offlineUntil: number | null;
}

export function queueStats(
  view: SchedulerView,
  slotStartedAt: ReadonlyMap<string, number>,
  averageMs: Readonly<Record<MediaKind, number | null>>,
): QueueStats {
  const running = runningCounts(view.jobs);
  const wait = rateLimitWaitMs(view.rateLimit, view.now);
  const rateReady = view.now + wait;
  const nextSlotAt = { video: null, image: null } as Record<MediaKind, number | null>;
  for (const kind of ['video', 'image'] as const) {
    if (running[kind] < view.limits[kind]) {
      nextSlotAt[kind] = rateReady;
      continue;
    }
    const avg = averageMs[kind];
    if (avg === null) continue;
    const ends = view.jobs
      .filter((j) => j.kind === kind && holdsSlot(j.state))
      .map((j) => Math.max(view.now, (slotStartedAt.get(j.id) ?? view.now) + avg));
    if (ends.length) nextSlotAt[kind] = Math.max(rateReady, Math.min(...ends));
  }
  const head = view.jobs.find((j) => j.state === 'queued' && !startHold(j, view));
  const full = (['video', 'image'] as const).find((k) => running[k] >= view.limits[k]);
  return {
    running,
    limits: view.limits,
    queued: view.jobs.filter((j) => j.state === 'queued').length,
    paused: view.paused,
    rateLimitedUntil: wait > 0 ? rateReady : null,
    nextSlotAt,
    nextKind: head?.kind ?? full ?? null,
    offlineUntil: view.offline ? view.offline.nextProbeAt : null,
  };
}
