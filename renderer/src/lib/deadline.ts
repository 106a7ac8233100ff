import { IpcError } from './ipc.ts';

/**
 * How long a screen waits for a load (the model and provider lists, the routing preview, the
 * usage) before it says it did not answer and offers a retry, rather than loading forever. Main's
 * own client gives up later (docs/architecture.md), so this is the screen's bound on a stuck call.
 */
export const LOAD_TIMEOUT_MS = 20_000;

/**
 * The load's answer, or an `IpcError` (`timeout`) naming `what` once `ms` has passed. The call
 * itself is left to finish or fail on its own; its late answer is ignored by whoever awaited this.
 */
export function withDeadline<T>(load: Promise<T>, what: string, ms = LOAD_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new IpcError({ code: 'timeout', message: `${what} did not answer within ${Math.round(ms / 1000)} s` })),
      ms,
    );
  });
  return Promise.race([load, late]).finally(() => clearTimeout(timer));
}
