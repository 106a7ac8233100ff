import type { PermissionSessionLike } from './types.ts';

/** Camera, microphone, geolocation, notifications from the page, HID, USB …: all denied. */
export function denyAllPermissions(session: PermissionSessionLike): void {
  session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler?.(() => false);
}

export interface HeaderSessionLike {
  webRequest: {
    onHeadersReceived(
      listener: (
        details: { responseHeaders?: Record<string, string[]> },
        callback: (response: { responseHeaders: Record<string, string[]> }) => void,
      ) => void,
    ): void;
  };
}

/** The CSP on every response the session sees, on top of the one the app protocol sends. */
export function enforceCsp(session: HeaderSessionLike, csp: string): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
}
