/**
 * The only gate to `shell.openExternal`: plain http(s) links to a named host, nothing else.
 * `file:`, `javascript:`, custom schemes, UNC paths, credentials (`https://bank.com@evil.test`),
 * control characters and over-long URLs are refused.
 */
const MAX_EXTERNAL_URL_LENGTH = 2048;

export type ExternalUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

export function checkExternalUrl(input: unknown): ExternalUrlCheck {
  if (typeof input !== 'string') return { ok: false, reason: 'not a string' };
  if (input.length === 0) return { ok: false, reason: 'empty' };
  if (input.length > MAX_EXTERNAL_URL_LENGTH)
    return { ok: false, reason: `longer than ${MAX_EXTERNAL_URL_LENGTH} characters` };
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u001f\u007f\s]/.test(input)) return { ok: false, reason: 'contains whitespace or control characters' };
  if (input.includes('\\')) return { ok: false, reason: 'contains a backslash (UNC or Windows path)' };
  if (!/^https?:\/\/[^/]/i.test(input))
    return { ok: false, reason: 'only http:// and https:// links open outside the app' };
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, reason: 'only http(s) links open outside the app' };
  if (url.username !== '' || url.password !== '')
    return { ok: false, reason: 'URLs with a user name or password are refused' };
  if (url.hostname === '') return { ok: false, reason: 'no host' };
  if (url.href.length > MAX_EXTERNAL_URL_LENGTH)
    return { ok: false, reason: `longer than ${MAX_EXTERNAL_URL_LENGTH} characters` };
  return { ok: true, url: url.href };
}
