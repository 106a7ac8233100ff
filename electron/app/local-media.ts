import { constants as fsConstants } from 'node:fs';
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';

/**
 * Serves local media files (downloads, exports, library files) to the renderer, with Range
 * support, and only from under the allowed roots. Used by Electron's `clipdesk-media://` protocol
 * and by the browser-mode host's `/local-media/`; written against the web `Request`/`Response`
 * so it runs (and is tested) in plain Node.
 *
 * URLs: `<prefix><root>/<relative path, each segment percent-encoded>`, e.g.
 * `clipdesk-media://downloads/2026-01/x%20y.mp4`.
 */
export type MediaRoots = () => Readonly<Record<string, string>>;

const MIME: Readonly<Record<string, string>> = {
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.webm': 'video/webm',
  '.mov': 'video/quicktime',
  '.gif': 'image/gif',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.json': 'application/json',
};

export function mimeForPath(file: string): string {
  return MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export type ResolveResult =
  { ok: true; file: string; size: number } | { ok: false; status: 400 | 403 | 404; reason: string };

/**
 * `root` names an allowed folder; `encodedRelative` is the rest of the URL path, still
 * percent-encoded. Refuses `..`/`.` segments (also when encoded as `%2e%2e`), backslashes,
 * NUL, absolute paths and drive letters, and anything whose real path (symlinks followed) leaves
 * the root's real path.
 */
async function resolveLocalMedia(roots: MediaRoots, root: string, encodedRelative: string): Promise<ResolveResult> {
  const rootDir = Object.hasOwn(roots(), root) ? roots()[root] : undefined;
  if (!rootDir) return { ok: false, status: 404, reason: 'unknown root' };
  if (encodedRelative.length === 0 || encodedRelative.length > 4096)
    return { ok: false, status: 400, reason: 'bad path length' };
  if (encodedRelative.includes('\\')) return { ok: false, status: 403, reason: 'backslash' };
  const segments: string[] = [];
  for (const raw of encodedRelative.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return { ok: false, status: 400, reason: 'bad percent-encoding' };
    }
    if (segment === '' || segment === '.' || segment === '..')
      return { ok: false, status: 403, reason: 'empty, . or .. segment' };
    if (/[\\/\0]/.test(segment)) return { ok: false, status: 403, reason: 'separator or NUL inside a segment' };
    if (/^[a-zA-Z]:/.test(segment)) return { ok: false, status: 403, reason: 'drive letter' };
    segments.push(segment);
  }
  const base = path.resolve(rootDir);
  const candidate = path.resolve(base, ...segments);
  if (!isInside(base, candidate)) return { ok: false, status: 403, reason: 'outside the root' };
  let realBase: string;
  let realFile: string;
  try {
    realBase = await realpath(base);
    realFile = await realpath(candidate);
  } catch {
    return { ok: false, status: 404, reason: 'not found' };
  }
  if (!isInside(realBase, realFile)) return { ok: false, status: 403, reason: 'symlink leaves the root' };
  const info = await stat(realFile).catch(() => null);
  if (!info?.isFile()) return { ok: false, status: 404, reason: 'not a file' };
  return { ok: true, file: realFile, size: info.size };
}

function isInside(base: string, target: string): boolean {
  const rel = path.relative(base, target);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

export type ByteRange = { start: number; end: number };

/**
 * One `bytes=` range against a file of `size` bytes. null: no usable Range header (serve it all);
 * 'unsatisfiable': answer 416. Several ranges are served whole (RFC 9110 lets a server ignore Range).
 */
export function parseRange(header: string | null, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return header.trim().startsWith('bytes=') && !header.includes(',') ? 'unsatisfiable' : null;
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return 'unsatisfiable';
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' } as const;

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS } });
}

/**
 * Opens the resolved file once and answers from that handle, so a file deleted or replaced after
 * the checks is either a 404 (gone before the open) or the bytes of what was checked (gone after:
 * the handle keeps them readable). The last component is opened without following a symlink.
 */
async function openChecked(file: string): Promise<{ handle: FileHandle; size: number } | null> {
  const handle = await open(file, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0)).catch(() => null);
  if (!handle) return null;
  const info = await handle.stat().catch(() => null);
  if (!info?.isFile()) {
    await handle.close().catch(() => undefined);
    return null;
  }
  return { handle, size: info.size };
}

/** Answers GET and HEAD for one file under a root, with Range (206/416). */
export async function serveLocalMedia(
  roots: MediaRoots,
  root: string,
  encodedRelative: string,
  method: string,
  rangeHeader: string | null,
): Promise<Response> {
  if (method !== 'GET' && method !== 'HEAD') {
    return new Response(null, { status: 405, headers: { allow: 'GET, HEAD', ...SECURITY_HEADERS } });
  }
  const resolved = await resolveLocalMedia(roots, root, encodedRelative);
  if (!resolved.ok) return plain(resolved.status, resolved.status === 404 ? 'Not found' : 'Forbidden');
  const opened = await openChecked(resolved.file);
  if (!opened) return plain(404, 'Not found');
  const { handle, size } = opened;
  const headers: Record<string, string> = {
    'content-type': mimeForPath(resolved.file),
    'accept-ranges': 'bytes',
    ...SECURITY_HEADERS,
  };
  const range = parseRange(rangeHeader, size);
  const { start, end } = range === null || range === 'unsatisfiable' ? { start: 0, end: size - 1 } : range;
  const length = size === 0 ? 0 : end - start + 1;
  if (range === 'unsatisfiable' || method === 'HEAD' || length === 0) await handle.close();
  if (range === 'unsatisfiable') {
    return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${size}` } });
  }
  headers['content-length'] = String(length);
  if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  const status = range ? 206 : 200;
  if (method === 'HEAD' || length === 0) return new Response(null, { status, headers });
  // autoClose: the handle is closed when the stream ends, fails or is destroyed (client gone).
  const body = Readable.toWeb(handle.createReadStream({ start, end })) as ReadableStream<Uint8Array>;
  return new Response(body, { status, headers });
}

/** Builds the URL of a local file for the renderer, or null when it is under no root. */
export function localMediaUrl(roots: MediaRoots, prefix: string, file: string): string | null {
  const target = path.resolve(file);
  for (const [name, dir] of Object.entries(roots())) {
    const base = path.resolve(dir);
    if (!isInside(base, target)) continue;
    const rel = path.relative(base, target).split(path.sep).map(encodeURIComponent).join('/');
    return `${prefix}${name}/${rel}`;
  }
  return null;
}
