import type { Job, LibraryItem } from '../../../../shared/ipc/index.ts';
import { stackVariations } from '../library/stacks.ts';

/** One thing the session made or brought onto the stage: a job (while it runs) or an item it made. */
export type StageEntry = { kind: 'job'; id: string } | { kind: 'item'; id: string };

/**
 * A take in the session filmstrip: a finished item (`itemId`), or a job not finished yet (pending,
 * failed or canceled: `itemId` null). Variations of a take stack under it.
 */
export interface Take {
  key: string;
  jobId: string | null;
  itemId: string | null;
  job: Job | null;
  item: LibraryItem | null;
  /** The item this take is a variation of (its source), if any. */
  sourceId: string | null;
  variations: Take[];
}

/** The most takes played side by side. */
export const MAX_COMPARE = 4;

function jobTakes(job: Job, items: Readonly<Record<string, LibraryItem>>): Take[] {
  const sourceId = job.request.variationOf ?? null;
  const ids = job.state === 'done' ? (job.result?.itemIds ?? []) : [];
  if (ids.length === 0)
    return [{ key: `job:${job.id}`, jobId: job.id, itemId: null, job, item: null, sourceId, variations: [] }];
  return ids.map((id) => ({
    key: id,
    jobId: job.id,
    itemId: id,
    job,
    item: items[id] ?? null,
    sourceId: sourceId ?? items[id]?.item.variationOf ?? null,
    variations: [],
  }));
}

/**
 * The session's takes, newest first, each variation stacked under its source when the source is in
 * the session too (else it stands on its own; a variation of a variation goes under the first source). `jobs` are the queue's (and those just submitted).
 */
export function sessionTakes(
  entries: readonly StageEntry[],
  jobs: Readonly<Record<string, Job>>,
  items: Readonly<Record<string, LibraryItem>>,
): Take[] {
  const flat: Take[] = [];
  const seen = new Set<string>();
  for (const entry of [...entries].reverse()) {
    const made =
      entry.kind === 'job'
        ? jobs[entry.id]
          ? jobTakes(jobs[entry.id]!, items)
          : []
        : [itemTake(entry.id, items[entry.id] ?? null)];
    for (const take of made) {
      if (seen.has(take.key)) continue;
      seen.add(take.key);
      flat.push(take);
    }
  }
  // The Library's stacks too (stores/library/stacks.ts): one rule for what stacks under what.
  return stackVariations(flat, { id: (t) => t.itemId, sourceOf: (t) => t.sourceId }).map(({ cover, variations }) => {
    cover.variations.push(...variations);
    return cover;
  });
}

function itemTake(id: string, item: LibraryItem | null): Take {
  return {
    key: id,
    jobId: null,
    itemId: id,
    job: null,
    item,
    sourceId: item?.item.variationOf ?? null,
    variations: [],
  };
}

/** Every take, variations included, in filmstrip order. */
export function allTakes(takes: readonly Take[]): Take[] {
  return takes.flatMap((t) => [t, ...t.variations]);
}

/**
 * What the stage shows: the focused take (an item, or a job's first item once it is done), else
 * the newest take of the session.
 */
export function stageTake(takes: readonly Take[], focus: StageEntry | null): Take | null {
  const all = allTakes(takes);
  const focused =
    focus?.kind === 'item'
      ? all.find((t) => t.itemId === focus.id)
      : focus?.kind === 'job'
        ? all.find((t) => t.jobId === focus.id)
        : undefined;
  return focused ?? takes[0] ?? null;
}

/**
 * What one more take like this one costs, in USD: the item's own price, else its job's price per
 * item, else the price its job was routed at. Null when nothing says.
 */
export function takeUnitPrice(take: Pick<Take, 'job' | 'item'>): number | null {
  if (take.item?.item.price !== undefined) return take.item.item.price;
  const result = take.job?.result;
  if (result && result.price !== null && result.itemIds.length > 0) return result.price / result.itemIds.length;
  const route = take.job?.route?.price;
  if (route === null || route === undefined) return null;
  const per = take.job?.request.variationOf ? (take.job.request.variations ?? 1) : 1;
  return route / per;
}

/** The price of N variations of a take: N times one take's, or null when unknown. */
export function variationsPrice(take: Pick<Take, 'job' | 'item'>, n: number): number | null {
  const unit = takeUnitPrice(take);
  return unit === null ? null : unit * n;
}

/** Adds or removes a take from the side-by-side selection; never more than MAX_COMPARE. */
export function toggleCompared(selected: readonly string[], itemId: string): string[] {
  if (selected.includes(itemId)) return selected.filter((id) => id !== itemId);
  if (selected.length >= MAX_COMPARE) return [...selected];
  return [...selected, itemId];
}

/** Item ids of finished takes not loaded yet: what the stage still has to fetch. */
export function missingItems(takes: readonly Take[]): string[] {
  return allTakes(takes)
    .filter((t) => t.itemId !== null && t.item === null)
    .map((t) => t.itemId!);
}
