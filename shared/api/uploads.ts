import { z } from 'zod';
import { optionalShape, withExtensions } from './extensions.ts';
import type { ExtensionNote } from './extensions.ts';
import { CONTENT_LIMITS } from './tiers.ts';
import { MediaItem } from './media.ts';

export const UPLOAD_IMAGE_MIMES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
export const UPLOAD_VIDEO_MIMES = ['video/mp4', 'video/webm', 'video/quicktime'] as const;

/** The size limit for a declared MIME type, or null when the type is not accepted. */
export function uploadLimitFor(mime: string): number | null {
  if ((UPLOAD_IMAGE_MIMES as readonly string[]).includes(mime)) return CONTENT_LIMITS.uploadImageBytes;
  if ((UPLOAD_VIDEO_MIMES as readonly string[]).includes(mime)) return CONTENT_LIMITS.uploadVideoBytes;
  return null;
}

/** `POST /media/upload` body. The size is bound into the signed URL. */
export const UploadRequest = z.object({
  filename: z
    .string()
    .trim()
    .min(1, 'filename is required')
    .max(255, 'filename must be at most 255 characters')
    .refine((s) => !/[\\/\0]/.test(s), 'filename must not contain path separators or NUL'),
  mime: z.string().trim().toLowerCase().min(1, 'mime is required'),
  size: z.number().int('size must be a whole number of bytes').min(1, 'size must be at least 1 byte'),
});
export type UploadRequest = z.infer<typeof UploadRequest>;

export const UPLOAD_TICKET_EXTENSIONS = {
  method: z.literal('PUT'),
  headers: z.record(z.string(), z.string()),
  /** ISO 8601. */
  expiresAt: z.string(),
};

/**
 * The spec's layer of an upload ticket ("obtain a signed URL"): its payload is not shown, so the
 * id the completion names and the signed URL are all the client requires.
 */
export const SpecUploadTicket = z.looseObject({ id: z.string().min(1), uploadUrl: z.string().min(1) });

/** An upload ticket as Clipdesk's service sends it. */
export const ClipdeskUploadTicket = z.looseObject({
  id: z.string(),
  uploadUrl: z.string(),
  ...UPLOAD_TICKET_EXTENSIONS,
});
export type ClipdeskUploadTicket = z.infer<typeof ClipdeskUploadTicket>;

/** A ticket as the client holds it; without `method`/`headers` it PUTs the file with its own content type. */
export const UploadTicket = z.looseObject({
  id: z.string(),
  uploadUrl: z.string(),
  ...optionalShape(UPLOAD_TICKET_EXTENSIONS),
});
export type UploadTicket = z.infer<typeof UploadTicket>;

export function readUploadTicket(ticket: z.infer<typeof SpecUploadTicket>, note: ExtensionNote): UploadTicket {
  return withExtensions(ticket, UPLOAD_TICKET_EXTENSIONS, 'result', note) as UploadTicket;
}

/** Single records answer under `result` (docs/api.md, "Envelope of single records"). */
export const UploadTicketResponse = z.looseObject({ success: z.literal(true), result: ClipdeskUploadTicket });
export const UploadCompleteResponse = z.looseObject({ success: z.literal(true), result: MediaItem });
