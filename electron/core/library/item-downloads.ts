import { ServiceError } from '../api/errors.ts';
import { CoreError } from '../errors.ts';
import type { LibraryStore } from './store.ts';

type Entry = NonNullable<ReturnType<LibraryStore['get']>>;

/** What downloading library items needs: the index and a downloader (the download manager). */
export interface ItemDownloadDeps {
  library: Pick<LibraryStore, 'get' | 'markDownloaded'>;
  downloads: {
    download(request: { item: Entry['item']; replace?: boolean; signal?: AbortSignal | undefined }): Promise<{
      path: string;
      bytes: number;
    }>;
  };
}

/** A background download's end: its size, or why it failed. */
export type DownloadOutcome = { bytes: number } | { error: unknown };

function entryOf(library: ItemDownloadDeps['library'], id: string): Entry {
  const entry = library.get(id);
  if (!entry) throw new CoreError('not_found', `No library item ${id}`);
  return entry;
}

/**
 * Items without a file on disk are downloaded in the background (each end goes to `onOutcome`);
 * those already saved are named as present.
 */
export function queueDownloads(
  deps: ItemDownloadDeps,
  ids: readonly string[],
  onOutcome: (id: string, outcome: DownloadOutcome) => void,
): { queued: string[]; present: string[] } {
  const queued: string[] = [];
  const present: string[] = [];
  for (const id of ids) {
    const entry = entryOf(deps.library, id);
    if (entry.downloadedPath) {
      present.push(id);
      continue;
    }
    queued.push(id);
    deps.downloads
      .download({ item: entry.item })
      .then((r) => {
        deps.library.markDownloaded(id, r.path);
        onOutcome(id, { bytes: r.bytes });
      })
      // A failed download, or a library that could not record it, is the job's error event.
      .catch((error: unknown) => onOutcome(id, { error }));
  }
  return { queued, present };
}

/** Why "Download again" failed, in words that say what is left: the service's answer, and the copy on disk. */
export function downloadAgainError(error: unknown, previous: string | null): unknown {
  const code = error instanceof ServiceError ? error.code : undefined;
  const kept = previous ? ' The copy already on disk is kept.' : '';
  if (code === 'not_found_error')
    return new CoreError(
      'not_found_error',
      `The service no longer has this item, so it cannot be downloaded again.${kept}`,
    );
  if (code === 'permission_error' || code === 'authentication_error')
    return new CoreError(
      'permission_error',
      `The service refused the download, even with a fresh link: ${String((error as Error).message).replace(/\.$/, '')}.${kept}`,
    );
  return error;
}

/** "Download again": the item's file is fetched anew over the copy on disk, which stays if that fails. */
export async function downloadAgain(deps: ItemDownloadDeps, id: string, signal?: AbortSignal): Promise<void> {
  const entry = entryOf(deps.library, id);
  if (entry.lostAt !== null)
    throw new CoreError(
      'not_found_error',
      'The service deleted this item before it was saved, so it cannot be downloaded.',
    );
  let result;
  try {
    // The manager renews an expired signed URL by itself (GET /media/:id) and retries once.
    result = await deps.downloads.download({ item: entry.item, replace: true, signal });
  } catch (error) {
    throw downloadAgainError(error, entry.downloadedPath);
  }
  deps.library.markDownloaded(id, result.path);
}
