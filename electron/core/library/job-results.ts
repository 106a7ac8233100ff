/** A finished job's items enter the library's index (docs/workflows.md). */
import type { Job } from '../jobs/index.ts';
import type { LibraryStore } from './store.ts';

/**
 * Indexes a done job's items and records the files the job saved as downloaded; the job's shot
 * chain is no longer pending. Returns the ids indexed, or null for a job not done with a result.
 */
export function indexJobResult(library: LibraryStore, job: Job): string[] | null {
  if (job.state !== 'done' || !job.result) return null;
  const items = job.result.items;
  library.upsert(items.map((i) => ({ modelSlug: i.model, providerName: i.provider, ...i })));
  items.forEach((item, n) => {
    const file = job.downloads[n];
    if (file) library.markDownloaded(item.id, file);
  });
  library.chains.forgetJob(job.id);
  return items.map((i) => i.id);
}
