import type { GeneratedItem, MediaItem } from '../../../shared/api/index.ts';
import type { Job, JobQueue, MediaLister } from '../jobs/index.ts';
import { findJobItems } from '../jobs/index.ts';
import type { Ledger } from './ledger.ts';
import { itemsCharge } from './ledger.ts';
import { CoreError } from '../errors.ts';

/** The parts of the app's services a recovery uses (ApiClient, DownloadManager and LibraryStore fit). */
export interface RecoverDeps {
  queue: Pick<JobQueue, 'get' | 'list' | 'retry'>;
  ledger: Ledger;
  profileId: string;
  api: MediaLister & {
    getMedia(id: string, options?: { signal?: AbortSignal }): Promise<MediaItem>;
  };
  downloads: { download(request: { item: MediaItem; signal?: AbortSignal }): Promise<{ path: string }> };
  library: {
    upsert(items: MediaItem[]): unknown;
    markDownloaded(id: string, path: string): unknown;
  };
  /** Tolerance between the app's clock and the service's createdAt. */
  clockSkewMs?: number;
}

export class RecoverError extends CoreError {
  declare readonly code: 'not_found';
  constructor(message: string) {
    super('not_found', message);
    this.name = 'RecoverError';
  }
}

/**
 * Recovers a job that was charged and not delivered (reconcile.ts):
 * - a job that has its items (the download failed or was stopped) is queued again to download
 *   them: the queue never submits a job that has a result;
 * - a job without a result is looked for in `/media` (same prompt, model and kind, created after
 *   its submit, claimed by no other job or charge); the items found become its result, charged at
 *   their own prices, and it downloads them;
 * - a charged job removed from the queue gets its items downloaded by id.
 * Never submits anything: a recovery costs nothing.
 */
export async function recoverJob(deps: RecoverDeps, jobId: string, signal?: AbortSignal): Promise<Job | null> {
  const job = deps.queue.get(jobId);
  const charge = deps.ledger.get(jobId);
  if (job && job.result) {
    if (job.state !== 'failed' && job.state !== 'canceled') return job;
    return deps.queue.retry(jobId);
  }
  if (job) {
    if (job.state !== 'failed' && job.state !== 'canceled') return job;
    const items = await findCharged(deps, job, signal);
    if (items.length === 0)
      throw new RecoverError('Nothing of this job was found on the service: it was not charged for it.');
    return deps.queue.retry(jobId, { items, price: itemsCharge(items), recoveredBy: 'library' });
  }
  if (!charge) throw new RecoverError(`No job or charge ${jobId}`);
  for (const id of charge.itemIds) {
    const item = await deps.api.getMedia(id, { ...(signal ? { signal } : {}) });
    const { path } = await deps.downloads.download({ item, ...(signal ? { signal } : {}) });
    deps.library.upsert([item]);
    deps.library.markDownloaded(item.id, path);
  }
  deps.ledger.markDelivered(jobId);
  return null;
}

/** What finding a job's charged items reads. */
export type ChargedItemsDeps = Pick<RecoverDeps, 'queue' | 'ledger' | 'profileId' | 'api' | 'clockSkewMs'>;

/**
 * The service's record of a job that ended without its answer: the items of /media that are this
 * job's (the earliest matching ones after its submit, claimed by no other job or charge, nor by
 * `alsoClaimed`). None: the service did not charge it.
 */
export async function chargedItemsOf(
  deps: ChargedItemsDeps,
  job: Job,
  options: { alsoClaimed?: ReadonlySet<string>; signal?: AbortSignal } = {},
): Promise<GeneratedItem[]> {
  return findCharged(deps, job, options.signal, options.alsoClaimed);
}

async function findCharged(
  deps: ChargedItemsDeps,
  job: Job,
  signal?: AbortSignal,
  alsoClaimed?: ReadonlySet<string>,
): Promise<GeneratedItem[]> {
  const claimed = new Set<string>(alsoClaimed);
  for (const j of deps.queue.list()) if (j.id !== job.id) for (const i of j.result?.items ?? []) claimed.add(i.id);
  // A removed job's items stay claimed through its charge.
  for (const c of deps.ledger.all(deps.profileId)) if (c.jobId !== job.id) for (const id of c.itemIds) claimed.add(id);
  const since = (job.submittedAt ?? job.createdAt) - (deps.clockSkewMs ?? 5_000);
  return findJobItems(deps.api, job, { since, claimed, ...(signal ? { signal } : {}) });
}
