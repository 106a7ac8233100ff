import type { PermissionSessionLike } from './types.ts';

/** Camera, microphone, geolocation, notifications from the page, HID, USB …: all denied. */
export function denyAllPermissions(session: PermissionSessionLike): void {
  session.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler?.(() => false);
}
