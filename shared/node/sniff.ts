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
