import { ServiceError } from '../api/errors.ts';

/** At most `concurrency` transfers at once; the others wait in order (a canceled one leaves the line). */
export function createSlots(concurrency: number) {
  const waiting: Array<() => void> = [];
  let active = 0;
  return {
    get active() {
      return active;
    },
    get queued() {
      return waiting.length;
    },
    async acquire(signal?: AbortSignal): Promise<void> {
      if (active < concurrency) {
        active++;
        return;
      }
      await new Promise<void>((resolve, reject) => {
        const go = (): void => {
          signal?.removeEventListener('abort', onAbort);
          active++;
          resolve();
        };
        const onAbort = (): void => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          reject(new ServiceError('canceled', 'The download was cancelled'));
        };
        waiting.push(go);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    release(): void {
      active--;
      waiting.shift()?.();
    },
  };
}

/**
 * The transfer writing each target now. Two downloads of one file (a library download still
 * resuming while "Download again" starts) would both resume from one part file and append the
 * same bytes twice: the second waits for the first, then finds the file (or replaces it).
 */
export function createWriters() {
  const writing = new Map<string, Promise<unknown>>();
  return async function oneWriterAt<T>(target: string, run: () => Promise<T>): Promise<T> {
    for (let busy = writing.get(target); busy; busy = writing.get(target)) await busy.catch(() => undefined);
    const running = run();
    writing.set(target, running);
    try {
      return await running;
    } finally {
      if (writing.get(target) === running) writing.delete(target);
    }
  };
}
