import { readFile } from 'node:fs/promises';
import { rendererCsp } from '../app/csp.ts';
import { resolveRendererFile } from '../app/renderer-files.ts';
import { MEDIA_URL_PREFIX } from './security/origin.ts';

/** The renderer's CSP in Electron: the shared policy plus the local media scheme. */
export const APP_CSP = rendererCsp([`${MEDIA_URL_PREFIX.replace('//', '')}`]);
const CSP = APP_CSP;

/**
 * `clipdesk-app://app/<path>` → the built renderer's file, with the CSP on every response.
 * Same segment rules as local media: no `..`, no backslash, nothing outside `staticDir`.
 */
export async function serveAppFile(staticDir: string, rawUrl: string): Promise<Response> {
  const afterHost = rawUrl.replace(/^[a-z-]+:\/\/[^/]*/i, '');
  const found = await resolveRendererFile(staticDir, afterHost.split(/[?#]/)[0] ?? '/');
  if (!found) return notFound();
  return new Response(await readFile(found.file), {
    status: 200,
    headers: { 'content-type': found.type, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' },
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
