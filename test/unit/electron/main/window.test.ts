import { describe, expect, it } from 'vitest';
import { createMainWindow, hardenWebContents } from '../../../../electron/main/platform/window.ts';
import { denyAllPermissions } from '../../../../electron/main/platform/session.ts';
import { appMenuTemplate } from '../../../../electron/main/platform/menu.ts';
import { claimSingleInstance } from '../../../../electron/main/platform/single-instance.ts';
import { REQUIRED_WEB_PREFERENCES } from '../../../../electron/main/security/web-preferences.ts';
import { APP_ENTRY_URL } from '../../../../electron/main/security/origin.ts';
import { FakeWebContents, FakeWindow } from './fakes.ts';

describe('every BrowserWindow', () => {
  it('gets the hardened webPreferences and loads the app origin, not file://', () => {
    FakeWindow.created = [];
    const opened: string[] = [];
    createMainWindow(FakeWindow, {
      preloadPath: '/app/dist/electron/preload.cjs',
      url: APP_ENTRY_URL,
      openExternal: (u) => opened.push(u),
    });
    expect(FakeWindow.created).toHaveLength(1);
    for (const win of FakeWindow.created) {
      expect(win.options.webPreferences).toMatchObject(REQUIRED_WEB_PREFERENCES);
      expect(win.options.webPreferences.preload).toBe('/app/dist/electron/preload.cjs');
      expect(win.loaded).toBe('clipdesk-app://app/index.html');
      expect(win.webContents.openHandler).not.toBeNull();
    }
  });

  it('the required values are the secure ones', () => {
    expect(REQUIRED_WEB_PREFERENCES).toEqual({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      disableBlinkFeatures: 'Auxclick',
    });
  });
});

describe('navigation and new windows', () => {
  const setup = () => {
    const wc = new FakeWebContents();
    const opened: string[] = [];
    hardenWebContents(wc, (u) => opened.push(u));
    return { wc, opened };
  };

  it('new windows are always denied; an http(s) link opens externally', () => {
    const { wc, opened } = setup();
    expect(wc.openHandler!({ url: 'https://example.com/docs' })).toEqual({ action: 'deny' });
    expect(wc.openHandler!({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
    expect(wc.openHandler!({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
    expect(opened).toEqual(['https://example.com/docs']);
  });

  it('navigation away from the app origin is prevented', () => {
    const { wc, opened } = setup();
    expect(wc.navigate('will-navigate', 'clipdesk-app://app/index.html#/library')).toBe(false);
    expect(wc.navigate('will-navigate', 'https://evil.test/')).toBe(true);
    expect(wc.navigate('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(wc.navigate('will-redirect', 'clipdesk-app://evil/')).toBe(true);
    expect(wc.navigate('will-navigate', 'clipdesk-app://app.evil.test/')).toBe(true);
    expect(wc.attachWebview()).toBe(true);
    expect(opened).toEqual(['https://evil.test/']);
  });
});

describe('session, menu, single instance', () => {
  it('the permission handler denies everything', () => {
    let request: ((wc: unknown, p: string, cb: (g: boolean) => void) => void) | null = null;
    let check: ((wc: unknown, p: string) => boolean) | null = null;
    denyAllPermissions({
      setPermissionRequestHandler: (h) => (request = h),
      setPermissionCheckHandler: (h) => (check = h),
    });
    for (const p of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen']) {
      let granted: boolean | null = null;
      request!(null, p, (g) => (granted = g));
      expect(granted).toBe(false);
      expect(check!(null, p)).toBe(false);
    }
  });

  it('the menu uses the standard roles; devtools only when unpackaged', () => {
    const roles = JSON.stringify(appMenuTemplate('linux', true));
    expect(roles).toContain('editMenu');
    expect(roles).not.toContain('toggleDevTools');
    expect(JSON.stringify(appMenuTemplate('darwin', false))).toContain('appMenu');
  });

  it('a second instance quits and focuses the first', () => {
    const calls: string[] = [];
    const app = {
      requestSingleInstanceLock: () => false,
      quit: () => void calls.push('quit'),
      on: (() => app) as never,
    };
    expect(claimSingleInstance(app, () => undefined)).toBe(false);
    expect(calls).toEqual(['quit']);
    let focus: (() => void) | null = null;
    const first = {
      requestSingleInstanceLock: () => true,
      quit: () => undefined,
      on: ((_: string, l: () => void) => ((focus = l), first)) as never,
    };
    let focused = 0;
    expect(claimSingleInstance(first, () => focused++)).toBe(true);
    focus!();
    expect(focused).toBe(1);
  });
});
