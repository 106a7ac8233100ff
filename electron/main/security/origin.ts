/**
 * The renderer is served from a privileged custom scheme, never `file://`, so it has an origin
 * of its own that the IPC binding can check.
 */
export const APP_SCHEME = 'clipdesk-app';
const APP_HOST = 'app';
const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;
export const MEDIA_SCHEME = 'clipdesk-media';
export const MEDIA_URL_PREFIX = `${MEDIA_SCHEME}://`;

/** True for a URL of the app's own origin (scheme and host compared exactly, case-insensitively). */
export function isAppUrl(url: string | undefined | null): boolean {
  if (typeof url !== 'string') return false;
  const lower = url.toLowerCase();
  return lower === APP_ORIGIN || lower.startsWith(`${APP_ORIGIN}/`);
}

/** The part of a WebFrameMain the sender check reads. */
export interface FrameLike {
  readonly url: string;
  readonly parent: unknown;
  readonly top?: unknown;
  readonly detached?: boolean;
}

/**
 * Only the top-level frame of our own origin may open the IPC channel. A null frame (destroyed or
 * navigated away), a subframe, a detached frame or any other origin is refused.
 */
export function isTrustedSender(frame: FrameLike | null | undefined): boolean {
  if (!frame) return false;
  if (frame.detached === true) return false;
  if (frame.parent !== null) return false;
  if (frame.top !== undefined && frame.top !== frame) return false;
  return isAppUrl(frame.url);
}
