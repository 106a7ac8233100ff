import type { BrowserWindowConstructorOptions, Event as ElectronEvent, HandlerDetails, WebPreferences } from 'electron';

/**
 * The few Electron APIs main uses, as narrow structural types. The real `electron` module
 * satisfies them; unit tests pass typed fakes.
 */
export interface WebContentsLike {
  setWindowOpenHandler(handler: (details: Pick<HandlerDetails, 'url'>) => { action: 'deny' }): void;
  on(
    event: 'will-navigate' | 'will-redirect',
    listener: (event: Pick<ElectronEvent, 'preventDefault'>, url: string) => void,
  ): unknown;
  on(event: 'will-attach-webview', listener: (event: Pick<ElectronEvent, 'preventDefault'>) => void): unknown;
}

export interface WindowLike {
  readonly webContents: WebContentsLike;
  loadURL(url: string): Promise<void>;
  once(event: 'ready-to-show', listener: () => void): unknown;
  show(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isFocused(): boolean;
  isDestroyed(): boolean;
  setProgressBar(progress: number): void;
}

export type WindowConstructor = new (
  options: BrowserWindowConstructorOptions & { webPreferences: WebPreferences },
) => WindowLike;

export interface ShellLike {
  openExternal(url: string): Promise<void>;
  showItemInFolder(fullPath: string): void;
}

export interface DialogLike {
  showOpenDialog(options: {
    title?: string;
    defaultPath?: string;
    properties: ('openDirectory' | 'createDirectory' | 'openFile' | 'dontAddToRecent')[];
  }): Promise<{ canceled: boolean; filePaths: string[] }>;
}

export interface NotificationLike {
  show(): void;
  on(event: 'click', listener: () => void): unknown;
}
export interface NotificationConstructor {
  new (options: { title: string; body: string; silent?: boolean }): NotificationLike;
  isSupported(): boolean;
}

export interface PermissionSessionLike {
  setPermissionRequestHandler(
    handler: ((wc: unknown, permission: string, callback: (granted: boolean) => void) => void) | null,
  ): void;
  setPermissionCheckHandler(handler: ((wc: unknown, permission: string) => boolean) | null): void;
  setDevicePermissionHandler?(handler: ((details: unknown) => boolean) | null): void;
}
