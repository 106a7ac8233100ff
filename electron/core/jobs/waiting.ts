import type { MediaKind } from '../../../shared/api/index.ts';
export { isUnreachable } from '../api/unreachable.ts';
import type { Job } from './state.ts';

/**
 * Why a queued job does not start yet (docs/workflows.md), as the queue says it. Each reason is its own
 * small function so that other holds (the budget's) sit beside these without touching them.
 * `until` is epoch ms (the IPC mapper makes it ISO).
 */
export interface JobHold {
  reason: 'budget' | 'offline' | 'scheduled' | 'slot';
  message: string;
  until: number | null;
}

/**
 * The service could not be reached: jobs wait for it instead of failing. `nextProbeAt` is when
 * the queue asks the service again (backoff), `failures` how many probes have failed so far.
 */
export interface OfflineState {
  since: number;
  failures: number;
  nextProbeAt: number;
}

/** "Submit at…": the job waits for the time the creator chose. */
export function scheduledHold(job: Pick<Job, 'state' | 'submitAt'>, now: number): JobHold | null {
  if (job.state !== 'queued' || !job.submitAt || job.submitAt <= now) return null;
  return { reason: 'scheduled', message: 'Scheduled', until: job.submitAt };
}

/** The service is unreachable: every queued job waits for it ("Waiting for the service"). */
export function offlineHold(job: Pick<Job, 'state'>, offline: OfflineState | null): JobHold | null {
  if (job.state !== 'queued' || !offline) return null;
  return { reason: 'offline', message: 'Waiting for the service', until: offline.nextProbeAt };
}

/**
 * Every slot of the job's kind is busy ("When a slot frees", the default): until = the estimate of
 * that kind's next free slot (queueStats' nextSlotAt), null when there is no estimate yet.
 */
export function slotHold(
  job: Pick<Job, 'state' | 'kind'>,
  slots: {
    running: Record<MediaKind, number>;
    limits: Record<MediaKind, number>;
    nextSlotAt: Record<MediaKind, number | null>;
  },
): JobHold | null {
  if (job.state !== 'queued' || slots.running[job.kind] < slots.limits[job.kind]) return null;
  return { reason: 'slot', message: `Waiting for a ${job.kind} slot`, until: slots.nextSlotAt[job.kind] };
}

/** The holds that keep the scheduler from starting a job (a busy slot is the scheduler's own count). */
export function startHold(
  job: Pick<Job, 'state' | 'submitAt'>,
  view: { now: number; offline?: OfflineState | null },
): JobHold | null {
  return scheduledHold(job, view.now) ?? offlineHold(job, view.offline ?? null);
}

/** Backoff of the probes while the service is unreachable: base, ×2 each failure, capped. */
export function probeDelayMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(failures, 20));
}
