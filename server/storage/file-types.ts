import { MEDIA_EXTENSIONS } from '../../shared/api/media.ts';

// The file types the service stores (shared/api/media.ts). Stored file names carry the extension
// (`video.mp4`), which is how the disk store knows a file's type without keeping it anywhere else.
const MIMES: Record<string, string> = Object.fromEntries(Object.entries(MEDIA_EXTENSIONS).map(([m, e]) => [e, m]));

export function extensionFor(mime: string): string {
  return MEDIA_EXTENSIONS[mime] ?? 'bin';
}

/** The MIME type of a stored file's name, by its extension; null when it has none we store. */
export function mimeForName(name: string): string | null {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? null : (MIMES[name.slice(dot + 1).toLowerCase()] ?? null);
}
