import { decideNavigation, decideWindowOpen } from '../security/navigation.ts';
import type { WebContentsLike, WindowConstructor, WindowLike } from './types.ts';

export interface MainWindowOptions {
  preloadPath: string;
  url: string;
  openExternal: (url: string) => void;
}

/**
 * Navigation and new windows denied, webviews refused; an allowed http(s) link opens in the
 * user's browser. Applied to every webContents (app 'web-contents-created'), not just ours.
 */
export function hardenWebContents(contents: WebContentsLike, openExternal: (url: string) => void): void {
  contents.setWindowOpenHandler(({ url }) => {
    const { openExternally } = decideWindowOpen(url);
    if (openExternally) openExternal(openExternally);
    return { action: 'deny' };
  });
  const onNavigate = (event: { preventDefault(): void }, url: string): void => {
    const decision = decideNavigation(url);
    if (decision.allow) return;
    event.preventDefault();
    if (decision.openExternally) openExternal(decision.openExternally);
  };
  contents.on('will-navigate', onNavigate);
  contents.on('will-redirect', onNavigate);
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** The app's one window, and the only place a BrowserWindow is made. */
export function createMainWindow(BrowserWindow: WindowConstructor, options: MainWindowOptions): WindowLike {
  const win = new BrowserWindow({
    width: 1360,
    height: 880,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Clipdesk',
    backgroundColor: '#111318',
    // Spelled out here (not built elsewhere) so Electronegativity's static checks can read them;
    // the unit test asserts they equal REQUIRED_WEB_PREFERENCES.
    webPreferences: {
      preload: options.preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      safeDialogs: true,
      enableWebSQL: false,
      // Middle-click would otherwise open links in new windows (auxclick).
      disableBlinkFeatures: 'Auxclick',
    },
  });
  hardenWebContents(win.webContents, options.openExternal);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(options.url);
  return win;
}
