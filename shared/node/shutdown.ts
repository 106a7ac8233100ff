/**
 * Stopping a program the same way everywhere (Electron's before-quit, browser mode and the
 * service on SIGINT/SIGTERM): its `dispose` runs once and is awaited before the process ends, so
 * running ffmpeg children are killed and waited for, journals are closed and logs written out.
 */
export interface ShutdownOptions {
  /** A dispose that hangs must not keep the process alive forever. Default 15 s. */
  timeoutMs?: number;
  onError?: (error: unknown) => void;
}

/** Runs `dispose` once however often it is asked for; settles when it has (or has timed out). Never rejects. */
export function onceShutdown(dispose: () => Promise<void>, options: ShutdownOptions = {}): () => Promise<void> {
  let running: Promise<void> | null = null;
  return () => {
    running ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          options.onError?.(new Error(`shutdown did not finish within ${options.timeoutMs ?? 15_000} ms`));
          resolve();
        }, options.timeoutMs ?? 15_000);
        timer.unref();
      });
      try {
        await Promise.race([
          Promise.resolve()
            .then(dispose)
            .catch((error: unknown) => options.onError?.(error)),
          timedOut,
        ]);
      } finally {
        clearTimeout(timer);
      }
    })();
    return running;
  };
}

export type StopSignal = 'SIGINT' | 'SIGTERM';

export interface SignalSource {
  on(signal: StopSignal, listener: () => void): unknown;
}

export const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM'];

/**
 * The first SIGINT or SIGTERM stops gracefully, then exits 0; a second one while stopping exits at
 * once (130/143, as a shell reports them). ffmpeg children die either way: see the watchdog.
 */
export function exitOnSignals(source: SignalSource, stop: () => Promise<void>, exit: (code: number) => void): void {
  let stopping = false;
  for (const signal of STOP_SIGNALS) {
    source.on(signal, () => {
      if (stopping) {
        exit(signal === 'SIGINT' ? 130 : 143);
        return;
      }
      stopping = true;
      void stop().then(() => exit(0));
    });
  }
}
