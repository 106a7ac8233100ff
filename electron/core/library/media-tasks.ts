import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ProgressState } from '../media/index.ts';

/** A media task's step, as the app tells it (the `media.task` event). */
export interface MediaTaskUpdate {
  id: string;
  itemId: string;
  operation: string;
  /** 0 to 1, or null when ffmpeg cannot say. */
  progress: number | null;
  state: 'running' | 'done' | 'failed' | 'canceled';
}

/** What a task's ffmpeg run is given: its cancel signal and where progress goes. */
export interface MediaTaskRunOptions {
  signal: AbortSignal;
  onProgress: (p: ProgressState) => void;
}

export interface MediaTaskRequest {
  itemId: string;
  operation: string;
  /** The file the run writes; its folder is made first. */
  output: string;
  run: (opts: MediaTaskRunOptions) => Promise<unknown>;
  signal?: AbortSignal | undefined;
}

/** The running ffmpeg tasks (previews, exports, frames): each with progress updates and a cancel handle. */
export interface MediaTasks {
  /** Runs one task to its end and answers its output file. */
  run(task: MediaTaskRequest): Promise<string>;
  /** Cancels a running task; false when there is none by that id. */
  cancel(taskId: string): boolean;
}

/** ffmpeg's fraction, kept within 0 to 1 (null stays null: an unknown duration). */
const progressOf = (p: ProgressState): number | null =>
  p.fraction === null ? null : Math.min(1, Math.max(0, p.fraction));

export function createMediaTasks(onUpdate: (update: MediaTaskUpdate) => void): MediaTasks {
  const running = new Map<string, AbortController>();
  return {
    async run(t) {
      const id = `task:${randomUUID()}`;
      const controller = new AbortController();
      t.signal?.addEventListener('abort', () => controller.abort());
      running.set(id, controller);
      const emit = (state: MediaTaskUpdate['state'], progress: number | null) =>
        onUpdate({ id, itemId: t.itemId, operation: t.operation, progress, state });
      emit('running', 0);
      mkdirSync(path.dirname(t.output), { recursive: true });
      try {
        await t.run({ signal: controller.signal, onProgress: (p) => emit('running', progressOf(p)) });
        emit('done', 1);
      } catch (error) {
        emit(controller.signal.aborted ? 'canceled' : 'failed', null);
        throw error;
      } finally {
        running.delete(id);
      }
      return t.output;
    },
    cancel(taskId) {
      const controller = running.get(taskId);
      if (!controller) return false;
      controller.abort();
      return true;
    },
  };
}
