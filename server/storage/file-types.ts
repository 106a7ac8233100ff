/**
 * The file types the service stores, by MIME type and file extension. Stored file names carry the
 * extension (`video.mp4`), which is how the disk store knows a file's type without keeping it
 * anywhere else.
 */
const EXTENSIONS: Record<string, string> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

const MIMES: Record<string, string> = Object.fromEntries(Object.entries(EXTENSIONS).map(([m, e]) => [e, m]));

export function extensionFor(mime: string): string {
  return EXTENSIONS[mime] ?? 'bin';
}

/** The MIME type of a stored file's name, by its extension; null when it has none we store. */
export function mimeForName(name: string): string | null {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? null : (MIMES[name.slice(dot + 1).toLowerCase()] ?? null);
}
