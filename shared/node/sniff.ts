/**
 * Content sniffing: the MIME type from a file's first bytes, never from its name or a header a
 * client chose. Covers the upload types the service accepts (shared/api/uploads.ts).
 */
export const SNIFF_BYTES = 64;

export type SniffedKind = 'image' | 'video';

export interface Sniffed {
  mime: string;
  kind: SniffedKind;
}

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((b, i) => bytes[offset + i] === b);
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  if (bytes.length < offset + length) return '';
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

/** The MIME type the leading bytes prove, or null when they match no accepted type. */
export function sniffMime(head: Uint8Array): Sniffed | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { mime: 'image/png', kind: 'image' };
  if (startsWith(head, [0xff, 0xd8, 0xff])) return { mime: 'image/jpeg', kind: 'image' };
  if (ascii(head, 0, 6) === 'GIF87a' || ascii(head, 0, 6) === 'GIF89a') return { mime: 'image/gif', kind: 'image' };
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 4) === 'WEBP') return { mime: 'image/webp', kind: 'image' };
  // EBML header: Matroska or WebM; the doctype follows within the first bytes.
  if (startsWith(head, [0x1a, 0x45, 0xdf, 0xa3])) {
    const text = ascii(head, 0, Math.min(head.length, SNIFF_BYTES));
    if (text.includes('webm')) return { mime: 'video/webm', kind: 'video' };
    return null;
  }
  // ISO base media (MP4, QuickTime): a box whose type is 'ftyp' at offset 4.
  if (ascii(head, 4, 4) === 'ftyp') {
    const brand = ascii(head, 8, 4);
    if (brand === 'qt  ') return { mime: 'video/quicktime', kind: 'video' };
    if (/^(avif|avis|heic|heix|mif1|msf1)$/.test(brand)) return null;
    return { mime: 'video/mp4', kind: 'video' };
  }
  return null;
}

/** The largest side a stored image may have: beyond it a "picture" is a header that lies. */
export const MAX_IMAGE_SIDE = 16_384;

/**
 * The picture size an image's header states, where it sits within the first SNIFF_BYTES (PNG's
 * IHDR, GIF's logical screen, WebP's VP8/VP8L/VP8X header); null for JPEG, whose size comes later.
 */
export function headerDimensions(head: Uint8Array): { width: number; height: number } | null {
  const sniffed = sniffMime(head);
  const u16le = (o: number) => (head[o] ?? 0) | ((head[o + 1] ?? 0) << 8);
  const u24le = (o: number) => u16le(o) | ((head[o + 2] ?? 0) << 16);
  if (sniffed?.mime === 'image/png' && head.length >= 24 && ascii(head, 12, 4) === 'IHDR') {
    return { width: readU32be(head, 16), height: readU32be(head, 20) };
  }
  if (sniffed?.mime === 'image/gif' && head.length >= 10) return { width: u16le(6), height: u16le(8) };
  if (sniffed?.mime === 'image/webp') {
    const chunk = ascii(head, 12, 4);
    if (chunk === 'VP8X' && head.length >= 30) return { width: u24le(24) + 1, height: u24le(27) + 1 };
    if (chunk === 'VP8 ' && head.length >= 30 && startsWith(head, [0x9d, 0x01, 0x2a], 23)) {
      return { width: u16le(26) & 0x3fff, height: u16le(28) & 0x3fff };
    }
    if (chunk === 'VP8L' && head.length >= 25 && head[20] === 0x2f) {
      const bits = (head[21] ?? 0) | ((head[22] ?? 0) << 8) | ((head[23] ?? 0) << 16) | ((head[24] ?? 0) << 24);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
  }
  return null;
}

function readU32be(bytes: Uint8Array, offset: number): number {
  return (
    (bytes[offset] ?? 0) * 2 ** 24 +
    ((bytes[offset + 1] ?? 0) << 16) +
    ((bytes[offset + 2] ?? 0) << 8) +
    (bytes[offset + 3] ?? 0)
  );
}

/** What ffprobe reads of a file, as far as the plausibility check needs it. */
export interface DecodedFacts {
  width: number;
  height: number;
  /** ffprobe's codec of the first video stream (`png`, `mjpeg`, `gif`, `webp`, `h264`…). */
  videoCodec: string;
  /** ffprobe's format name (`png_pipe`, `gif`, `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`…). */
  formatName: string;
}

const IMAGE_CODECS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'mjpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/**
 * Why what ffprobe read of a file is not the picture its leading bytes claim, or null when it is:
 * the codec must be the sniffed type's, each side at most MAX_IMAGE_SIDE, and the size the one
 * the header states. A header followed by anything else (HTML, say) passes sniffing and even
 * ffprobe, which believes the header; this is what catches it.
 */
export function implausibleDecode(head: Uint8Array, facts: DecodedFacts): string | null {
  const sniffed = sniffMime(head);
  if (!sniffed) return 'its content is not an accepted type';
  if (sniffed.kind === 'video') {
    const container = sniffed.mime === 'video/webm' ? 'webm' : 'mp4';
    return facts.formatName.split(',').includes(container) || (container === 'mp4' && facts.formatName.includes('mov'))
      ? null
      : `it is not ${sniffed.mime} (ffprobe reads ${facts.formatName || 'nothing'})`;
  }
  const codec = IMAGE_CODECS[sniffed.mime];
  if (facts.videoCodec !== codec) return `it is not ${sniffed.mime} (ffprobe reads ${facts.videoCodec || 'nothing'})`;
  if (facts.width > MAX_IMAGE_SIDE || facts.height > MAX_IMAGE_SIDE) {
    return `its ${facts.width}x${facts.height} picture is larger than ${MAX_IMAGE_SIDE} pixels on a side`;
  }
  const stated = headerDimensions(head);
  if (stated && (stated.width !== facts.width || stated.height !== facts.height)) {
    return `its header says ${stated.width}x${stated.height} but it decodes as ${facts.width}x${facts.height}`;
  }
  return null;
}
