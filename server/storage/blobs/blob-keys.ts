import { BlobKeyError } from './types.ts';

/**
 * What a storage key may be. Keys are built by the service from ids and names it generated
 * (server/storage/layout.ts), never from raw input; these rules are the store's own guard, the same
 * on disk and in a bucket, so a key that would escape the data directory on disk (`../`), hide
 * (`.name`), or carry control characters is refused everywhere rather than stored in one place only.
 *
 * - `/`-separated segments of letters, digits, `_`, `-` and `.`, not starting with `.`;
 * - the first segment is one of the areas of the layout (the disk store's other directories,
 *   tmp/ and logs/, are not the store's);
 * - at most 8 segments and 512 characters.
 */
export const BLOB_AREAS: readonly string[] = ['media', 'uploads'];

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const PARTIAL_SEGMENT = /^(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?$/;

export function isBlobKey(key: string): boolean {
  if (key.length === 0 || key.length > 512) return false;
  const segments = key.split('/');
  return (
    segments.length >= 2 &&
    segments.length <= 8 &&
    BLOB_AREAS.includes(segments[0] ?? '') &&
    segments.every((s) => SEGMENT.test(s))
  );
}

export function checkBlobKey(key: string): void {
  if (!isBlobKey(key)) throw new BlobKeyError(`not a storage key: ${describe(key)}`);
}

/** A prefix for `list`: '' or the start of a key (whole segments, then part of one). */
export function checkBlobPrefix(prefix: string): void {
  if (prefix === '') return;
  const segments = prefix.split('/');
  const last = segments.pop() ?? '';
  const ok =
    prefix.length <= 512 &&
    segments.length <= 7 &&
    PARTIAL_SEGMENT.test(last) &&
    segments.every((s) => SEGMENT.test(s)) &&
    (segments.length === 0 ? BLOB_AREAS.some((a) => a.startsWith(last)) : BLOB_AREAS.includes(segments[0] ?? ''));
  if (!ok) throw new BlobKeyError(`not a storage key prefix: ${describe(prefix)}`);
}

/** A key for a message: quoted and escaped, so control characters show as escapes, and cut short. */
function describe(key: string): string {
  return JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
}
