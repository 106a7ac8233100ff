import type { NotificationEvent } from '../../shared/ipc/schemas/events.ts';

/**
 * What the app needs from the desktop around it. Electron implements it in
 * electron/main/platform; browser mode has no desktop to drive, so its version says so.
 */
export interface PlatformPort {
  readonly mode: 'electron' | 'browser';
  readonly capabilities: {
    revealInFolder: boolean;
    pickDirectory: boolean;
    osNotifications: boolean;
    pathUploads: boolean;
  };
  /** Called only with a URL that passed checkExternalUrl. */
  openExternal(url: string): Promise<void>;
  /** The native folder dialog, opened by main (settings.choosePath): the page never names the folder. */
  pickDirectory(options: { title?: string; defaultPath?: string }): Promise<string | null>;
  /** The native file dialog, likewise (the ffmpeg binary). */
  pickFile(options: { title?: string; defaultPath?: string }): Promise<string | null>;
  /** true when the file manager was asked to show it. */
  revealPath(file: string): Promise<boolean>;
  /**
   * An OS notification; `onClick` runs when the creator clicks it (after the window is focused, where
   * the platform does that itself). docs/workflows.md, "Notices".
   */
  notify(notification: NotificationEvent, onClick?: () => void): void;
  /** Whether the app's window has the keyboard focus (a notification then would only repeat the page's notice). */
  windowFocused(): boolean;
  /** Brings the app's window to the front (restored when minimised). */
  focusWindow(): void;
  /** 0..1 in the taskbar/dock; null clears it. */
  setProgress(fraction: number | null): void;
}

export const browserPlatform: PlatformPort = {
  mode: 'browser',
  capabilities: { revealInFolder: false, pickDirectory: false, osNotifications: false, pathUploads: false },
  // The browser opens links itself (target=_blank, rel=noopener); main does not spawn a browser for the page.
  openExternal: () => Promise.resolve(),
  pickDirectory: () => Promise.resolve(null),
  pickFile: () => Promise.resolve(null),
  revealPath: () => Promise.resolve(false),
  notify: () => undefined,
  // The page is the window: it tells its own notices (and the browser's, when allowed: renderer/src/app/notify.ts).
  windowFocused: () => true,
  focusWindow: () => undefined,
  setProgress: () => undefined,
};
