import { ServiceError } from '../api/errors.ts';
import type { LibraryItem, LibraryStore } from './store.ts';

/** What the guard keeps: nothing, favourites, or everything of mine. */
export type RetentionPolicy = 'off' | 'favourites' | 'everything';

/** The Settings choice (`off`, `favourites`, `mine`) as the guard's policy: "mine" keeps everything of mine. */
export function retentionPolicyOf(setting: 'off' | 'favourites' | 'mine'): RetentionPolicy {
  return setting === 'mine' ? 'everything' : setting;
}

export interface RetentionDownloader {
  /** Saves the item locally and returns where. Rejects with a ServiceError `not_found_error` when it is gone. */
  download(item: LibraryItem, signal: AbortSignal): Promise<{ path: string }>;
}

export type RetentionEvent =
  | { type: 'warning'; id: string; deadline: number; prompt: string }
  | { type: 'saved'; id: string; path: string }
  | { type: 'lost'; id: string }
  | { type: 'failed'; id: string; message: string };

export interface RetentionGuardOptions {
  store: LibraryStore;
  downloader: RetentionDownloader;
  now: () => number;
  policy: () => RetentionPolicy;
  /** Download this long before the deadline. */
  marginMs?: number;
  /** Warn this long before the deadline (the "N days"). */
  warnBeforeMs?: number;
  /** How often `start()` checks. */
  intervalMs?: number;
  onEvent?: (event: RetentionEvent) => void;
}

export interface RetentionTickResult {
  saved: string[];
  warned: string[];
  lost: string[];
  failed: string[];
}

export interface RetentionGuard {
  tick(): Promise<RetentionTickResult>;
  start(): void;
  dispose(): Promise<void>;
}

const HOUR = 3_600_000;

function isGone(error: unknown): boolean {
  return (
    error instanceof ServiceError && (error.code === 'not_found_error' || error.status === 404 || error.status === 410)
  );
}

/**
 * Saves items before the service's retention deletes them, warns ahead, and marks as lost what
 * it could not save. A tick never throws: one bad item never stops the others, or the app.
 */
export function createRetentionGuard(options: RetentionGuardOptions): RetentionGuard {
  const { store, downloader, now, policy } = options;
  const marginMs = options.marginMs ?? 6 * HOUR;
  const warnBeforeMs = options.warnBeforeMs ?? 3 * 24 * HOUR;
  const intervalMs = options.intervalMs ?? 5 * 60_000;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<RetentionTickResult> | null = null;

  const emit = (event: RetentionEvent): void => {
    try {
      options.onEvent?.(event);
    } catch {
      // A listener's bug must not stop the guard.
    }
  };

  async function pass(): Promise<RetentionTickResult> {
    const result: RetentionTickResult = { saved: [], warned: [], lost: [], failed: [] };
    const t = now();
    const mode = policy();
    try {
      for (const entry of store.dueBefore(t + warnBeforeMs, { limit: 1000 })) {
        if (entry.warnedAt !== null || entry.deadline === null || entry.deadline <= t) continue;
        // Items the guard is about to save need no warning.
        const willSave = mode === 'everything' || (mode === 'favourites' && entry.favourite);
        if (willSave) continue;
        store.markWarned(entry.item.id);
        result.warned.push(entry.item.id);
        emit({ type: 'warning', id: entry.item.id, deadline: entry.deadline, prompt: entry.item.prompt });
      }
      if (mode === 'off') return result;
      const due = store.dueBefore(t + marginMs, { favouritesOnly: mode === 'favourites', limit: 50 });
      for (const entry of due) {
        if (controller.signal.aborted) break;
        const id = entry.item.id;
        try {
          const { path } = await downloader.download(entry, controller.signal);
          store.markDownloaded(id, path);
          result.saved.push(id);
          emit({ type: 'saved', id, path });
        } catch (error) {
          if (controller.signal.aborted) break;
          if (isGone(error)) {
            store.markLost(id);
            result.lost.push(id);
            emit({ type: 'lost', id });
          } else {
            result.failed.push(id);
            emit({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) });
          }
        }
      }
    } catch (error) {
      // The index itself failed (disk full, closed database): report and try again next time.
      emit({ type: 'failed', id: '', message: error instanceof Error ? error.message : String(error) });
    }
    return result;
  }

  function tick(): Promise<RetentionTickResult> {
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  }

  function schedule(): void {
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      void tick().finally(schedule);
    }, intervalMs);
    timer.unref?.();
  }

  return {
    tick,
    start() {
      if (timer === null) {
        void tick();
        schedule();
      }
    },
    async dispose() {
      controller.abort();
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
