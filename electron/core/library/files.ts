import { mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { CoreError } from '../errors.ts';
import type { LibraryStore } from './store.ts';

/** What finding an item's file on disk needs: the index, a downloader, ffmpeg's trim, a work folder. */
export interface ItemFileDeps {
  library: Pick<LibraryStore, 'get' | 'markDownloaded' | 'chains'>;
  downloads: {
    download(request: { item: NonNullable<ReturnType<LibraryStore['get']>>['item']; signal?: AbortSignal }): Promise<{
      path: string;
    }>;
  };
  trim(input: string, output: string, opts: { start: number; end: number; signal?: AbortSignal }): Promise<unknown>;
  /** Where trimmed shots go (a media root). */
  workDir: string;
  /** The item was downloaded (the index changed). */
  downloaded(id: string): void;
}

/** A file name part made of an item id: letters, digits, `_` and `-` only. */
export const safeFileName = (id: string): string => id.replace(/[^a-zA-Z0-9_-]/g, '_');

/** The item's file on disk, downloading it first when needed. */
export async function localFile(deps: ItemFileDeps, id: string, signal?: AbortSignal): Promise<string> {
  const entry = deps.library.get(id);
  if (!entry) throw new CoreError('not_found', `No library item ${id}`);
  if (entry.downloadedPath) {
    try {
      if (statSync(entry.downloadedPath).isFile()) return entry.downloadedPath;
    } catch {
      // Moved or deleted: download again.
    }
  }
  if (entry.lostAt !== null)
    throw new CoreError('not_found_error', 'The service deleted this item before it was saved.');
  const result = await deps.downloads.download({ item: entry.item, ...(signal ? { signal } : {}) });
  deps.library.markDownloaded(id, result.path);
  deps.downloaded(id);
  return result.path;
}

/**
 * The file a chain uses for a shot: the clip itself, or its trimmed part (made once into the
 * work folder) when the shot is used trimmed. Its last frame is what "Continue this shot" takes.
 */
export async function shotFile(
  deps: ItemFileDeps,
  id: string,
  signal?: AbortSignal,
  trim = deps.library.chains.get(id)?.trim,
): Promise<string> {
  const input = await localFile(deps, id, signal);
  if (!trim) return input;
  const target = path.join(deps.workDir, 'shots', `${safeFileName(id)}-trim-${trim.start}-${trim.end}.mp4`);
  if (statSync(target, { throwIfNoEntry: false })?.isFile()) return target;
  const part = `${target}.part.mp4`;
  mkdirSync(path.dirname(target), { recursive: true });
  await deps.trim(input, part, { start: trim.start, end: trim.end, ...(signal ? { signal } : {}) });
  renameSync(part, target);
  return target;
}
