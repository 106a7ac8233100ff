import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { rendererCsp } from '../app/csp.ts';
import { mimeForPath } from '../app/local-media.ts';
import { MEDIA_URL_PREFIX } from './security/origin.ts';

const TEXT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};

/** The renderer's CSP in Electron: the shared policy plus the local media scheme. */
export const APP_CSP = rendererCsp([`${MEDIA_URL_PREFIX.replace('//', '')}`]);
const CSP = APP_CSP;

/**
 * `clipdesk-app://app/<path>` → the built renderer's file, with the CSP on every response.
 * Same segment rules as local media: no `..`, no backslash, nothing outside `staticDir`.
 */
export async function serveAppFile(staticDir: string, rawUrl: string): Promise<Response> {
  const afterHost = rawUrl.replace(/^[a-z-]+:\/\/[^/]*/i, '');
  const pathname = (afterHost.split(/[?#]/)[0] ?? '/') || '/';
  const rel = pathname === '/' ? 'index.html' : pathname.replace(/^\/+/, '');
  const segments: string[] = [];
  for (const raw of rel.split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return notFound();
    }
    if (seg === '' || seg === '.' || seg === '..' || /[\\/\0]/.test(seg)) return notFound();
    segments.push(seg);
  }
  const base = path.resolve(staticDir);
  const file = path.resolve(base, ...segments);
  if (!file.startsWith(base + path.sep)) return notFound();
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return notFound();
  const type = TEXT_TYPES[path.extname(file).toLowerCase()] ?? mimeForPath(file);
  return new Response(await readFile(file), {
    status: 200,
    headers: { 'content-type': type, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' },
  });
}

function notFound(): Response {
  return new Response('Not found', {
    status: 404,
    headers: { 'content-type': 'text/plain', 'content-security-policy': CSP },
  });
}

/** `clipdesk-media://<root>/<encoded path>` → root and the still-encoded rest, from the raw URL (no normalisation). */
export function splitMediaUrl(rawUrl: string): { root: string; rest: string } | null {
  if (!rawUrl.toLowerCase().startsWith(MEDIA_URL_PREFIX)) return null;
  const tail = rawUrl.slice(MEDIA_URL_PREFIX.length).split(/[?#]/)[0] ?? '';
  const slash = tail.indexOf('/');
  if (slash <= 0) return null;
  return { root: tail.slice(0, slash).toLowerCase(), rest: tail.slice(slash + 1) };
}
