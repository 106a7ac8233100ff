import { DEFAULT_RETRY_POLICY, realSleep } from '../api/retry.ts';
import { DEFAULT_NAMING_PATTERN, extensionFor, renderPattern, resolveInside } from './naming.ts';
import { createSlots, createWriters } from './slots.ts';
import { createContentOpener, pickFormat } from './sources.ts';
import { transfer, type Attempts } from './transfer.ts';
import type {
  DownloadableItem,
  DownloadManager,
  DownloadManagerOptions,
  DownloadProgress,
  DownloadRequest,
} from './types.ts';

/** How long a download's connection may send nothing before it is dropped and resumed. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

export function createDownloadManager(options: DownloadManagerOptions): DownloadManager {
  const { api } = options;
  const pattern = options.pattern ?? DEFAULT_NAMING_PATTERN;
  const concurrency = Math.max(1, options.concurrency ?? 3);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 6);
  const retry = {
    policy: DEFAULT_RETRY_POLICY,
    sleep: options.sleep ?? realSleep,
    random: options.random ?? Math.random,
  };
  const listeners = new Set<(p: DownloadProgress) => void>();
  const slots = createSlots(concurrency);
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const attempts: Attempts = { maxAttempts, idleTimeoutMs, retry, open: createContentOpener(api), listeners };
  const oneWriterAt = createWriters();

  function pathFor(item: DownloadableItem, opts: { dir?: string; format?: string } = {}): string {
    const { mime, url } = pickFormat(item, opts.format);
    const rel = renderPattern(pattern, {
      id: item.id,
      model: item.model,
      provider: item.provider,
      media: item.media,
      createdAt: item.createdAt,
      ext: extensionFor(mime, url),
    });
    const root = item.media === 'image' && options.imageDir !== undefined ? options.imageDir : options.dir;
    return resolveInside(opts.dir ?? root, rel);
  }

  /** Where a request's file goes. */
  function targetOf(req: DownloadRequest): string {
    return pathFor(req.item, { ...(req.dir ? { dir: req.dir } : {}), ...(req.format ? { format: req.format } : {}) });
  }

  /**
   * Downloads not yet settled, each with what aborts it: dispose aborts them and waits for them, so
   * that none still writes afterwards.
   */
  const running = new Map<Promise<unknown>, AbortController>();

  return {
    download(req) {
      const controller = new AbortController();
      const signal = req.signal ? AbortSignal.any([req.signal, controller.signal]) : controller.signal;
      const run = oneWriterAt(targetOf(req), async () => {
        await slots.acquire(signal);
        try {
          return await transfer(attempts, req, targetOf(req), signal);
        } finally {
          slots.release();
        }
      });
      running.set(run, controller);
      const forget = (): void => void running.delete(run);
      run.then(forget, forget);
      return run;
    },
    pathFor,
    onProgress(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get active() {
      return slots.active;
    },
    get queued() {
      return slots.queued;
    },
    async dispose() {
      for (const controller of running.values()) controller.abort();
      listeners.clear();
      // Aborted downloads still close and remove their partial files: done before the caller
      // closes the library or removes the folder under them.
      await Promise.allSettled([...running.keys()]);
    },
  };
}
