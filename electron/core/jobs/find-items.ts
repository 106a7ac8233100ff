import type { MediaItem, MediaListQueryInput } from '../../../shared/api/index.ts';
import type { Job } from './state.ts';

/** The one call of the service this needs: `GET /media`, the caller's own items, newest first. */
export interface MediaLister {
  listMedia(
    query?: MediaListQueryInput,
    options?: { signal?: AbortSignal },
  ): Promise<{ total: number; medias: MediaItem[] }>;
}

/**
 * A job's items in the service's `/media` when its answer never reached the app (a lost response,
 * a kill, a charged-but-not-delivered job): the earliest unclaimed items made after `since` with
 * the job's prompt, model and kind, as many as it makes. Used by the queue's reconcile and by the
 * ledger's Recover, so both claim the same items for the same job.
 */
export async function findJobItems(
  api: MediaLister,
  job: Pick<Job, 'kind' | 'request' | 'variationOf'>,
  options: { since: number; claimed: ReadonlySet<string>; signal?: AbortSignal },
): Promise<MediaItem[]> {
  const { since, claimed } = options;
  const wanted = job.kind === 'image' || job.variationOf ? Math.max(1, Number(job.request.n ?? 1)) : 1;
  const model = job.request.model.trim().toLowerCase();
  const matches: MediaItem[] = [];
  for (let page = 0; page < 20; page++) {
    const res = await api.listMedia(
      { user: 'me', sort: 'newest', limit: 100, page, ...(job.kind === 'video' ? { media: 'video' } : {}) },
      options.signal ? { signal: options.signal } : {},
    );
    for (const item of res.medias) {
      if (Date.parse(item.createdAt) < since || claimed.has(item.id)) continue;
      const sameModel =
        item.model.toLowerCase() === model ||
        item.modelSlug.toLowerCase() === model ||
        model.startsWith(`${item.model.toLowerCase()}:`);
      if (sameModel && item.prompt === job.request.prompt && item.media === job.kind) matches.push(item);
    }
    const oldest = res.medias.at(-1);
    if (res.medias.length < 100 || !oldest || Date.parse(oldest.createdAt) < since) break;
  }
  // The earliest ones after the submit are the job's.
  return matches.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt)).slice(0, wanted);
}
