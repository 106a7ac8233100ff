import { secureWebPreferences } from '../security/web-preferences.ts';
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

/** The app's one window. Its webPreferences come only from secureWebPreferences. */
export function createMainWindow(BrowserWindow: WindowConstructor, options: MainWindowOptions): WindowLike {
  const win = new BrowserWindow({
    width: 1360,
    height: 880,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Clipdesk',
    backgroundColor: '#111318',
    webPreferences: secureWebPreferences(options.preloadPath),
  });
  hardenWebContents(win.webContents, options.openExternal);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(options.url);
  return win;
}
