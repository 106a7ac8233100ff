import type { ApiClient } from '../api/index.ts';
import { CoreError } from '../errors.ts';
import type { LibraryStore } from './store.ts';
import type { LibrarySync } from './sync.ts';

/** Marks items favourite (or not); answers how many changed. */
export function setFavourites(
  library: Pick<LibraryStore, 'setFavourite'>,
  ids: readonly string[],
  favourite: boolean,
): number {
  let updated = 0;
  for (const id of ids) if (library.setFavourite(id, favourite)) updated++;
  return updated;
}

/**
 * Asks the service to keep an item longer (or for ever); the index takes the item it answers, or
 * the next sync's when it answers none.
 */
export async function retainItem(
  deps: { api: Pick<ApiClient, 'retainMedia'>; library: Pick<LibraryStore, 'upsert'>; sync: Pick<LibrarySync, 'sync'> },
  id: string,
  terms: { days?: number | undefined; forever?: boolean | undefined },
  signal?: AbortSignal,
): Promise<void> {
  const updated = await deps.api.retainMedia(
    id,
    { ...(terms.days ? { days: terms.days } : {}), ...(terms.forever ? { forever: terms.forever } : {}) },
    { signal },
  );
  if (updated) deps.library.upsert([updated]);
  else await deps.sync.sync(signal).catch(() => undefined);
}

/** "Use trimmed clip in chain": in and out points in seconds, or `clear` for the whole clip. */
export type ShotTrimRequest = { start: number; end: number } | { clear: true };

/** The trim a shot keeps: only a video's, with its in point before the clip's end and its out point cut to it. */
export function shotTrimFor(
  item: { media: string; duration: number },
  request: ShotTrimRequest,
): { start: number; end: number } | null {
  if (item.media !== 'video') throw new CoreError('invalid_input', 'Only a video can be trimmed.');
  if ('start' in request && item.duration > 0 && request.start >= item.duration)
    throw new CoreError('invalid_input', `The in point must be before the clip's end (${item.duration} s).`);
  return 'start' in request ? { start: request.start, end: Math.min(request.end, item.duration || request.end) } : null;
}
