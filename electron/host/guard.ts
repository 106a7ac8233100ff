import { timingSafeEqual } from 'node:crypto';
import { HTTP_IPC } from '../../shared/ipc/client.ts';

/**
 * The browser-mode host's gate, as a pure function of the request line and headers:
 * - Host must be this loopback origin (a DNS-rebinding page arrives with its own Host) → else 403;
 * - an Origin, when sent, must be this origin too; cross-site fetch metadata is refused → else 403;
 * - the per-launch secret must come in the `t` query parameter (first visit) or in the cookie the
 *   host set from it → else 401.
 */
export interface GuardConfig {
  port: number;
  secret: string;
}

export type GuardResult =
  | { ok: true; /** The secret came in the query: set the cookie and drop it from the URL. */ fromQuery: boolean }
  | { ok: false; status: 401 | 403; reason: string };

export function cookieName(port: number): string {
  return `clipdesk_${port}`;
}

function allowedOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`];
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sameSecret(given: string, secret: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function checkRequest(
  rawUrl: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  config: GuardConfig,
): GuardResult {
  const origins = allowedOrigins(config.port);
  const host = first(headers.host);
  if (!host || !origins.includes(`http://${host.toLowerCase()}`))
    return { ok: false, status: 403, reason: 'foreign Host' };
  const origin = first(headers.origin);
  if (origin !== undefined && !origins.includes(origin.toLowerCase()))
    return { ok: false, status: 403, reason: 'foreign Origin' };
  const site = first(headers['sec-fetch-site']);
  if (site === 'cross-site') return { ok: false, status: 403, reason: 'cross-site request' };

  const q = rawUrl.indexOf('?');
  if (q !== -1) {
    const token = new URLSearchParams(rawUrl.slice(q + 1)).get(HTTP_IPC.tokenParam);
    if (token !== null) {
      return sameSecret(token, config.secret)
        ? { ok: true, fromQuery: true }
        : { ok: false, status: 401, reason: 'wrong secret' };
    }
  }
  const cookie = readCookie(first(headers.cookie), cookieName(config.port));
  if (cookie !== undefined && sameSecret(cookie, config.secret)) return { ok: true, fromQuery: false };
  return { ok: false, status: 401, reason: 'missing secret' };
}

/** Only these addresses may be bound: the host never listens beyond loopback. */
const LOOPBACK_HOSTS = ['127.0.0.1', '::1'] as const;

export function assertLoopback(host: string): void {
  if (!(LOOPBACK_HOSTS as readonly string[]).includes(host)) {
    throw new Error(`refusing to bind ${host}: the browser-mode host listens on loopback only (127.0.0.1 or ::1)`);
  }
}
