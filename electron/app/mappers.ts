import type { Job as CoreJob, JobProgress, QueueStats as CoreQueueStats } from '../core/jobs/index.ts';
import type { DownloadProgress } from '../core/downloads/index.ts';
import type { DownloadOutcome, LibraryItem as CoreLibraryItem, RetentionEvent } from '../core/library/index.ts';
import type { ApiClient } from '../core/api/index.ts';
import type { RateLimitState } from '../../shared/ipc/schemas/catalog.ts';
import { END_IMAGE_PARAMETER } from '../../shared/api/model-parameters.ts';
import { isModelParameterName, JobRequest } from '../../shared/ipc/schemas/jobs.ts';
import type { Job, QueueStats, RetryWait, TransferProgress } from '../../shared/ipc/schemas/jobs.ts';
import type { LibraryItem } from '../../shared/ipc/schemas/library.ts';
import type { NotificationEvent, TransferEvent } from '../../shared/ipc/schemas/events.ts';

/** Core shapes → contract shapes. Pure; epoch ms become ISO strings. */
const iso = (ms: number | null | undefined): string | null =>
  typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null;

/**
 * The job's request as the renderer sees it: the v1 request the queue holds, read back through the
 * contract's schema (which drops what the app does not show, such as `n`), with the start and end
 * frames as the files the queue uploads (uploaded yet or not), else the URLs it passes.
 */
function jobRequestOf(job: CoreJob): JobRequest {
  const {
    image_url,
    duration,
    n,
    [END_IMAGE_PARAMETER]: endImage,
    ...request
  } = job.request as CoreJob['request'] & Record<typeof END_IMAGE_PARAMETER, unknown>;
  const endFrame = job.endFrame
    ? { kind: 'path', path: job.endFrame }
    : typeof endImage === 'string'
      ? { kind: 'url', url: endImage }
      : undefined;
  const startFrame = job.startFrame
    ? { kind: 'path', path: job.startFrame }
    : image_url
      ? { kind: 'url', url: image_url }
      : undefined;
  return JobRequest.parse({
    ...request,
    ...modelParametersOf(request),
    kind: job.kind,
    ...(job.kind === 'video' ? { duration, startFrame, ...(endFrame ? { endFrame } : {}) } : {}),
    ...(job.variationOf ? { variationOf: job.variationOf, variations: typeof n === 'number' ? n : 1 } : {}),
  });
}

/** The model's own parameters among a v1 request's fields (job-body.ts spreads them there). */
function modelParametersOf(request: Record<string, unknown>): {
  parameters?: Record<string, string | number | boolean>;
} {
  const own = Object.entries(request).filter(
    (entry): entry is [string, string | number | boolean] =>
      isModelParameterName(entry[0]) && ['string', 'number', 'boolean'].includes(typeof entry[1]),
  );
  return own.length > 0 ? { parameters: Object.fromEntries(own) } : {};
}

/**
 * Each queued job's place in line (0 = next), by id. Computed once per list or event, not once per
 * job: a list of every job would otherwise sort the queue once for each of them.
 */
export function queuePositions(all: readonly CoreJob[]): ReadonlyMap<string, number> {
  const queued = all.filter((j) => j.state === 'queued').sort((a, b) => a.position - b.position);
  return new Map(queued.map((j, i) => [j.id, i]));
}

/** The positions of a job that is not queued (it has none): no need to look at the queue. */
export const NO_POSITIONS: ReadonlyMap<string, number> = new Map();

/**
 * `positions`: queuePositions of the queue's jobs (NO_POSITIONS will do for a job that is not
 * queued); `progress`: the queue's in-memory transfer progress of the job (queue.progress(id)).
 */
type CoreWait = NonNullable<JobProgress['upload']>['wait'];

/** A wait still ahead, as the page shows it; null once it has passed. */
function retryWaitOf(wait: CoreWait, now: number): RetryWait | null {
  if (!wait || wait.until <= now) return null;
  return {
    ...(wait.reason ? { reason: wait.reason } : {}),
    what: wait.what,
    until: iso(wait.until)!,
    ...(wait.message === undefined ? {} : { message: wait.message }),
  };
}

function transferOf(transfer: NonNullable<JobProgress['upload']>, now: number): TransferProgress {
  const wait = retryWaitOf(transfer.wait, now);
  return { done: transfer.done, total: transfer.total, ...(wait ? { wait } : {}) };
}

export function toJob(job: CoreJob, positions: ReadonlyMap<string, number>, now: number, progress?: JobProgress): Job {
  const index = positions.get(job.id);
  return {
    id: job.id,
    state: job.state,
    request: jobRequestOf(job),
    createdAt: iso(job.createdAt) ?? new Date(now).toISOString(),
    startedAt: iso(job.submittedAt),
    finishedAt: job.state === 'done' || job.state === 'failed' || job.state === 'canceled' ? iso(job.updatedAt) : null,
    position: job.state === 'queued' && index !== undefined ? index : null,
    waitingUntil: job.notBefore !== null && job.notBefore > now ? iso(job.notBefore) : null,
    attempts: job.attempts,
    upload: progress?.upload ? transferOf(progress.upload, now) : null,
    download: progress?.download ? transferOf(progress.download, now) : null,
    ...(progress?.generation && job.state === 'generating'
      ? {
          generation: {
            id: progress.generation.id,
            step: progress.generation.step,
            queuePosition: progress.generation.queuePosition,
            progress: progress.generation.progress,
            wait: retryWaitOf(progress.generation.wait, now),
          },
        }
      : job.generationId && job.state === 'generating'
        ? { generation: { id: job.generationId, step: 'queued' as const, queuePosition: null, progress: null } }
        : {}),
    route: job.route ? { ...job.route, dropped: [...job.route.dropped] } : null,
    hold: progress?.hold
      ? { reason: progress.hold.reason, message: progress.hold.message, until: iso(progress.hold.until) }
      : null,
    error: job.error ? { code: job.error.code, message: job.error.message } : null,
    result: job.result
      ? { itemIds: job.result.items.map((i) => i.id), price: job.result.price, paths: [...job.downloads] }
      : null,
  };
}

/**
 * The slot estimate is per kind: the card describes the kind the queue waits for (`nextKind`).
 * Taking the sooner of the two kinds said "Slot free" while every video slot was busy, because an
 * image slot was free.
 */
export function toQueueStats(stats: CoreQueueStats, now: number): QueueStats {
  const inMs = (t: number | null): number | null => (t === null ? null : Math.max(0, t - now));
  const byKind = { video: inMs(stats.nextSlotAt.video), image: inMs(stats.nextSlotAt.image) };
  const known = [byKind.video, byKind.image].filter((t): t is number => t !== null);
  return {
    paused: stats.paused,
    queued: stats.queued,
    running: { video: stats.running.video, image: stats.running.image },
    limit: { video: stats.limits.video, image: stats.limits.image },
    nextSlotInMs: stats.nextKind ? byKind[stats.nextKind] : known.length === 0 ? null : Math.min(...known),
    nextSlotKind: stats.nextKind,
    nextSlotInMsByKind: byKind,
    offline: stats.offlineUntil === null ? null : { nextTryInMs: Math.max(0, stats.offlineUntil - now) },
  };
}

export function toRateLimitState(api: Pick<ApiClient, 'rateLimit' | 'tier'>, now: number): RateLimitState {
  const { limit, remaining, reset } = api.rateLimit;
  const waitMs = remaining === 0 && reset !== null ? Math.max(0, reset * 1000 - now) : 0;
  return { limit, remaining, reset, waitMs, tier: api.tier };
}

export function toLibraryItem(
  entry: CoreLibraryItem,
  collectionIds: string[],
  mediaUrl: (file: string) => string | null,
  chain: LibraryItem['chain'] = null,
  /** The hover-play proxy's file, when one was made (docs/workflows.md, "Preview renditions"). */
  previewFile: string | null = null,
): LibraryItem {
  const previewUrl = previewFile ? mediaUrl(previewFile) : null;
  return {
    item: entry.item,
    favourite: entry.favourite,
    collectionIds,
    retentionDeadline: iso(entry.deadline),
    lost: entry.lostAt !== null,
    localPath: entry.downloadedPath,
    localUrl: entry.downloadedPath ? mediaUrl(entry.downloadedPath) : null,
    ...(previewUrl ? { previewUrl } : {}),
    chain,
  };
}

/** A running download as the transfers list shows it. */
export function toDownloadProgress(p: DownloadProgress): TransferEvent {
  return {
    id: `download:${p.id}`,
    direction: 'download',
    jobId: null,
    itemId: p.id,
    done: p.received,
    total: p.total,
    state: 'running',
    error: null,
  };
}

/** A background download's end as the transfers list shows it. */
export function toDownloadEnd(id: string, outcome: DownloadOutcome): TransferEvent {
  const done = 'bytes' in outcome;
  return {
    id: `download:${id}`,
    direction: 'download',
    jobId: null,
    itemId: id,
    done: done ? outcome.bytes : 0,
    total: done ? outcome.bytes : null,
    state: done ? 'done' : 'failed',
    error: done ? null : outcome.error instanceof Error ? outcome.error.message : String(outcome.error),
  };
}

const DAY_MS = 86_400_000;

/**
 * A retention guard's warning ("Deleted in N days", whole days left, rounded up) or failure as the
 * notification the page shows; null for the events that only change the library.
 */
export function retentionNotification(e: RetentionEvent, now: number): NotificationEvent | null {
  if (e.type === 'warning') {
    const days = Math.max(0, Math.ceil((e.deadline - now) / DAY_MS));
    return {
      level: 'warning',
      title: `Deleted in ${days} day${days === 1 ? '' : 's'}`,
      body: e.prompt,
      jobId: null,
      itemId: e.id,
    };
  }
  if (e.type === 'failed') {
    return { level: 'error', title: 'Could not save before deletion', body: e.message, jobId: null, itemId: e.id };
  }
  return null;
}
