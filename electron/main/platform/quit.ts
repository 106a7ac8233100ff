import { STOP_SIGNALS } from '../../../shared/node/shutdown.ts';
import type { SignalSource } from '../../../shared/node/shutdown.ts';

/** The part of Electron's `app` the quit sequence uses; the real one satisfies it, tests pass a fake. */
export interface QuitApp {
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
  exit(code: number): void;
}

/**
 * Quitting waits for the core: the first `before-quit` is held (preventDefault) until `shutdown`
 * has settled (it never rejects: see onceShutdown), then the app quits for real. SIGINT and SIGTERM
 * go through the same path; a second signal while shutting down exits at once.
 */
export function bindQuit(app: QuitApp, shutdown: () => Promise<void>, signals?: SignalSource): void {
  let state: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('before-quit', (event) => {
    if (state === 'stopped') return;
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    void shutdown().then(() => {
      state = 'stopped';
      app.quit();
    });
  });
  for (const signal of STOP_SIGNALS) {
    signals?.on(signal, () => {
      if (state === 'running') app.quit();
      else if (state === 'stopping') app.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}
