import type { NotificationEvent } from '../../../shared/ipc/schemas/events.ts';
import { checkExternalUrl } from '../../app/external-url.ts';
import type { PlatformPort } from '../../app/platform.ts';
import type { DialogLike, NotificationConstructor, ShellLike, WindowLike } from './types.ts';

export interface DesktopDeps {
  shell: ShellLike;
  dialog: DialogLike;
  Notification: NotificationConstructor;
  window: () => WindowLike | null;
}

/** The Electron PlatformPort: shell, dialogs, OS notifications and taskbar/dock progress. */
export function electronPlatform(deps: DesktopDeps): PlatformPort {
  const focusWindow = (): void => {
    const win = deps.window();
    if (!win || win.isDestroyed()) return;
    if (win.isMinimized()) win.restore();
    win.focus();
  };
  return {
    mode: 'electron',
    capabilities: {
      revealInFolder: true,
      pickDirectory: true,
      osNotifications: deps.Notification.isSupported(),
      pathUploads: true,
    },
    async openExternal(url) {
      // Checked again here: this is the last step before the OS opens it.
      const check = checkExternalUrl(url);
      if (!check.ok) throw new Error(`refused to open ${JSON.stringify(url.slice(0, 100))}: ${check.reason}`);
      await deps.shell.openExternal(check.url);
    },
    async pickDirectory(options) {
      const result = await deps.dialog.showOpenDialog({ ...options, properties: ['openDirectory', 'createDirectory'] });
      return result.canceled ? null : (result.filePaths[0] ?? null);
    },
    async pickFile(options) {
      const result = await deps.dialog.showOpenDialog({ ...options, properties: ['openFile', 'dontAddToRecent'] });
      return result.canceled ? null : (result.filePaths[0] ?? null);
    },
    revealPath(file) {
      deps.shell.showItemInFolder(file);
      return Promise.resolve(true);
    },
    notify(n: NotificationEvent, onClick?: () => void) {
      if (!deps.Notification.isSupported()) return;
      const note = new deps.Notification({ title: n.title, body: n.body, silent: n.level === 'info' });
      // What a click does is decided in plain Node (electron/app/feedback.ts); without a callback, it focuses the window.
      note.on('click', onClick ?? focusWindow);
      note.show();
    },
    windowFocused() {
      const win = deps.window();
      return !!win && !win.isDestroyed() && win.isFocused();
    },
    focusWindow,
    setProgress(fraction) {
      const win = deps.window();
      if (!win || win.isDestroyed()) return;
      // -1 removes the bar (Electron's convention).
      win.setProgressBar(fraction === null ? -1 : fraction);
    },
  };
}
