import type { App } from 'electron';

/** One app per user: a second launch focuses the first window and exits. */
export function claimSingleInstance(
  app: Pick<App, 'requestSingleInstanceLock' | 'quit' | 'on'>,
  focus: () => void,
): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', focus);
  return true;
}
