/**
 * What ffmpeg may open: local files only, and only container formats that hold video or images.
 * Without the format list ffmpeg happily "decodes" a text file as ANSI art.
 */
const INPUT_PROTOCOLS = 'file,pipe';
const INPUT_FORMATS = [
  'mov', // mp4, m4v, mov, 3gp
  'matroska', // mkv, webm
  'avi',
  'flv',
  'mpegts',
  'gif',
  'apng',
  'image2',
  'png_pipe',
  'jpeg_pipe',
  'webp_pipe',
  'bmp_pipe',
].join(',');

/** Options placed before every `-i`. */
export function safeInputOptions(): string[] {
  return ['-protocol_whitelist', INPUT_PROTOCOLS, '-format_whitelist', INPUT_FORMATS];
}

/** The input argument for a checked absolute path: `file:` so no name is read as a protocol. */
export function fileUrl(absolutePath: string): string {
  return `file:${absolutePath}`;
}
