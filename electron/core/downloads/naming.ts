import { isAbsolute, relative, resolve, sep } from 'node:path';
import { MEDIA_EXTENSIONS } from '../../../shared/api/media.ts';

/** Where downloads land under the download root (docs/workflows.md, "Retention, downloads and notifications in the app"). */
export const DEFAULT_NAMING_PATTERN = '{yyyy}-{mm}/{model}/{createdAt}-{id}.{ext}';

/** A folder named on the command line gets the file itself, no subfolders (docs/cli.md). */
export const FLAT_NAMING_PATTERN = '{createdAt}-{id}.{ext}';

export interface NamingFields {
  id: string;
  model: string;
  provider?: string;
  media?: string;
  createdAt: string;
  ext: string;
}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
const MAX_SEGMENT = 120;

/**
 * One path segment that is safe on every OS: no separators or traversal, no control or
 * Windows-forbidden characters, no reserved device names, no trailing dots or spaces.
 */
export function safeSegment(input: string): string {
  let s = input
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f<>:"/\\|?*]/g, '_')
    .replace(/[. ]+$/g, '')
    .trim();
  if (s === '' || s === '.' || s === '..') s = '_';
  if (/^\.+$/.test(s)) s = '_';
  if (WINDOWS_RESERVED.test(s)) s = `_${s}`;
  if (s.length > MAX_SEGMENT) s = s.slice(0, MAX_SEGMENT).replace(/[. ]+$/g, '');
  return s;
}

/** `2026-01-05T10:20:30.123Z` → `2026-01-05T10-20-30Z` (sorts by time, valid everywhere). */
export function fileTimestamp(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return safeSegment(iso);
  return d
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
}

/**
 * The relative path for an item. Every token value becomes part of one segment (a model id's
 * `/` does not make a directory); only the pattern's own `/` separates directories.
 */
export function renderPattern(pattern: string, fields: NamingFields): string {
  const date = new Date(fields.createdAt);
  const valid = !Number.isNaN(date.getTime());
  const values: Record<string, string> = {
    yyyy: valid ? String(date.getUTCFullYear()) : 'unknown',
    mm: valid ? String(date.getUTCMonth() + 1).padStart(2, '0') : '00',
    dd: valid ? String(date.getUTCDate()).padStart(2, '0') : '00',
    model: fields.model.replace(/[/:]/g, '_'),
    provider: fields.provider ?? 'unknown',
    media: fields.media ?? 'media',
    createdAt: fileTimestamp(fields.createdAt),
    id: fields.id,
    ext: fields.ext,
  };
  return pattern
    .split(/[/\\]+/)
    .filter((segment) => segment !== '')
    .map((segment) => safeSegment(segment.replace(/\{(\w+)\}/g, (m, name: string) => values[name] ?? m)))
    .join('/');
}

/** Joins under root and refuses anything that would escape it. */
export function resolveInside(root: string, relativePath: string): string {
  const base = resolve(root);
  const target = resolve(base, relativePath);
  const rel = relative(base, target);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
    throw new Error(`Refusing a download path outside the download folder: ${relativePath}`);
  }
  return target;
}

export function extensionFor(mime: string, url?: string): string {
  const known = MEDIA_EXTENSIONS[mime.split(';')[0]!.trim().toLowerCase()];
  if (known) return known;
  if (url) {
    try {
      const m = /\.([a-z0-9]{1,5})$/i.exec(new URL(url).pathname);
      if (m) return m[1]!.toLowerCase();
    } catch {
      // not a URL: no extension from it
    }
  }
  return 'bin';
}
