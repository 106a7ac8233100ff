import type { Job as CoreJob, JobProgress, QueueStats as CoreQueueStats } from '../core/jobs/index.ts';
import type { LibraryItem as CoreLibraryItem } from '../core/library/index.ts';
import type { ApiClient } from '../core/api/index.ts';
import type { RateLimitState } from '../../shared/ipc/schemas/catalog.ts';
import type { Job, JobRequest, QueueStats, StartFrame } from '../../shared/ipc/schemas/jobs.ts';
import type { LibraryItem } from '../../shared/ipc/schemas/library.ts';

/** Core shapes → contract shapes. Pure; epoch ms become ISO strings. */
const iso = (ms: number | null | undefined): string | null =>
  typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null;

export function toJobRequest(job: Pick<CoreJob, 'kind' | 'request' | 'startFrame'>): JobRequest {
  const r = job.request as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof r[k] === 'string' ? r[k] : undefined);
  const num = (k: string): number | undefined => (typeof r[k] === 'number' ? r[k] : undefined);
  const startFrame: StartFrame | undefined = job.startFrame
    ? { kind: 'path', path: job.startFrame }
    : str('image_url')
      ? { kind: 'url', url: str('image_url')! }
      : undefined;
  const routing = str('routing');
  const out: JobRequest = {
    kind: job.kind,
    prompt: str('prompt') ?? '',
    model: str('model') ?? '',
    routing: routing === 'cheapest' || routing === 'compatible' ? routing : 'optimal',
    public: r.public !== false,
  };
  for (const k of ['provider', 'size', 'style', 'aspect_ratio'] as const) if (str(k) !== undefined) out[k] = str(k);
  if (num('seed') !== undefined) out.seed = num('seed');
  if (num('duration') !== undefined && job.kind === 'video') out.duration = num('duration');
  if (startFrame && job.kind === 'video') out.startFrame = startFrame;
  return out;
}

/** `progress`: the queue's in-memory transfer progress of the job (queue.progress(id)). */
export function toJob(job: CoreJob, all: readonly CoreJob[], now: number, progress?: JobProgress): Job {
  const queued = all.filter((j) => j.state === 'queued').sort((a, b) => a.position - b.position);
  const index = queued.findIndex((j) => j.id === job.id);
  return {
    id: job.id,
    state: job.state,
    request: toJobRequest(job),
    createdAt: iso(job.createdAt) ?? new Date(now).toISOString(),
    startedAt: iso(job.submittedAt),
    finishedAt: job.state === 'done' || job.state === 'failed' || job.state === 'canceled' ? iso(job.updatedAt) : null,
    position: job.state === 'queued' && index !== -1 ? index : null,
    waitingUntil: job.notBefore !== null && job.notBefore > now ? iso(job.notBefore) : null,
    attempts: job.attempts,
    upload: progress?.upload ? { done: progress.upload.done, total: progress.upload.total } : null,
    download: progress?.download ? { done: progress.download.done, total: progress.download.total } : null,
    error: job.error ? { code: job.error.kind, message: job.error.message } : null,
    result: job.result
      ? { itemIds: job.result.items.map((i) => i.id), price: job.result.price, paths: [...job.downloads] }
      : null,
  };
}

export function toQueueStats(stats: CoreQueueStats, now: number): QueueStats {
  const next = [stats.nextSlotAt.video, stats.nextSlotAt.image].filter((t): t is number => t !== null);
  return {
    paused: stats.paused,
    queued: stats.queued,
    running: { video: stats.running.video, image: stats.running.image },
    limit: { video: stats.limits.video, image: stats.limits.image },
    nextSlotInMs: next.length === 0 ? null : Math.max(0, Math.min(...next) - now),
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
): LibraryItem {
  return {
    item: entry.item,
    favourite: entry.favourite,
    collectionIds,
    retentionDeadline: iso(entry.deadline),
    lost: entry.lostAt !== null,
    localPath: entry.downloadedPath,
    localUrl: entry.downloadedPath ? mediaUrl(entry.downloadedPath) : null,
  };
}
