import { stat } from 'node:fs/promises';
import path from 'node:path';
import { mimeForPath } from './local-media.ts';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

export interface RendererFile {
  file: string;
  size: number;
  type: string;
  isDocument: boolean;
}

/**
 * A file of the built renderer for a URL path (`/` is `index.html`), for both Electron's
 * `clipdesk-app://` protocol and the browser-mode host. The same segment rules as local media:
 * each segment decoded on its own, no empty, `.` or `..` segment, no separator or NUL inside one,
 * nothing outside `staticDir`. Null means 404.
 */
export async function resolveRendererFile(staticDir: string, rawPathname: string): Promise<RendererFile | null> {
  const rel = rawPathname === '/' || rawPathname === '' ? 'index.html' : rawPathname.replace(/^\/+/, '');
  const segments: string[] = [];
  for (const raw of rel.split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (seg === '' || seg === '.' || seg === '..' || /[\\/\0]/.test(seg)) return null;
    segments.push(seg);
  }
  const base = path.resolve(staticDir);
  const file = path.resolve(base, ...segments);
  if (!file.startsWith(base + path.sep)) return null;
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) return null;
  const ext = path.extname(file).toLowerCase();
  return { file, size: info.size, type: TYPES[ext] ?? mimeForPath(file), isDocument: ext === '.html' };
}
