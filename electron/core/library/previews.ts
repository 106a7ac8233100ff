import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { MediaTools, PreviewOptions } from '../media/index.ts';

/**
 * The hover-play proxy (docs/workflows.md, "Preview renditions"): 360 lines high at most, a
 * keyframe every 12 frames so playback starts and loops at once, no sound (hover-play is muted),
 * and a high CRF. A 4 s 1080p take becomes some tens of kilobytes instead of megabytes.
 */
export const HOVER_PROXY: Readonly<PreviewOptions> = { maxHeight: 360, gop: 12, audio: false, crf: 30 };

export interface HoverPreviews {
  /** The proxy of an item, once made; null before (the tile then plays the service's smallest rendition). */
  fileOf(itemId: string): string | null;
  /** Makes an item's proxy from its saved video, once; runs one at a time. Answers the file, or null when it failed. */
  make(itemId: string, source: string): Promise<string | null>;
  /** Stops the run in progress and drops the waiting ones. */
  dispose(): Promise<void>;
}

export interface HoverPreviewsOptions {
  /** The folder the proxies are kept in (inside the app's media folder, so the page may play them). */
  dir: string;
  tools: () => Pick<MediaTools, 'previewProxy'>;
  onError?: (itemId: string, error: unknown) => void;
}

/** A file name from an item id: the id itself when it is plain, else its hash (ids come from the service). */
function fileNameOf(itemId: string): string {
  const plain = /^[A-Za-z0-9_-]{1,100}$/.test(itemId);
  return `${plain ? itemId : createHash('sha256').update(itemId).digest('hex').slice(0, 32)}.mp4`;
}

export function createHoverPreviews(o: HoverPreviewsOptions): HoverPreviews {
  mkdirSync(o.dir, { recursive: true });
  // One read of the folder at start: later lookups are a Set's, free on every library page.
  const made = new Set(readdirSync(o.dir).filter((f) => f.endsWith('.mp4')));
  const pending = new Map<string, Promise<string | null>>();
  const stop = new AbortController();
  let chain: Promise<unknown> = Promise.resolve();

  async function run(itemId: string, source: string): Promise<string | null> {
    const name = fileNameOf(itemId);
    const file = path.join(o.dir, name);
    const partial = `${file}.part`;
    try {
      if (stop.signal.aborted) return null;
      await o.tools().previewProxy(source, partial, { ...HOVER_PROXY, signal: stop.signal, timeoutMs: 120_000 });
      renameSync(partial, file);
      made.add(name);
      return file;
    } catch (error) {
      rmSync(partial, { force: true });
      if (!stop.signal.aborted) o.onError?.(itemId, error);
      return null;
    }
  }

  return {
    fileOf(itemId) {
      const name = fileNameOf(itemId);
      return made.has(name) ? path.join(o.dir, name) : null;
    },
    make(itemId, source) {
      const known = this.fileOf(itemId);
      if (known) return Promise.resolve(known);
      const waiting = pending.get(itemId);
      if (waiting) return waiting;
      // One ffmpeg at a time: proxies are background work and must not take both cores from renders.
      const next = chain.then(() => run(itemId, source));
      chain = next;
      pending.set(itemId, next);
      void next.finally(() => pending.delete(itemId));
      return next;
    },
    async dispose() {
      stop.abort();
      await chain.catch(() => undefined);
    },
  };
}
