import { z } from 'zod';
import { CONTENT_LIMITS } from '../../api/tiers.ts';

/** What an upload returns: the service's media id and the URL to use as a start frame. */
export const UploadResult = z.object({
  mediaId: z.string(),
  url: z.string(),
  mime: z.string(),
  bytes: z.number().int().nonnegative(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  /** true: the same bytes had been uploaded to this service before, and that upload was reused. */
  reused: z.boolean(),
  /** e.g. "downsized from 6000x4000 to the model's 4096 limit". */
  warnings: z.array(z.string()),
});
export type UploadResult = z.infer<typeof UploadResult>;

const uploadOptions = {
  /** Downsize images over this many pixels on the long side before uploading. */
  maxDimension: z.number().int().min(16).max(CONTENT_LIMITS.imageMaxDimension).optional(),
  /** Caller's id for the transfer, echoed in transfer.progress events. */
  transferId: z.string().min(1).max(100).optional(),
};

/** Electron: the path comes from a drop (webUtils.getPathForFile) or a file picked in main. */
export const UploadFromPath = z.object({ path: z.string().min(1).max(4096), ...uploadOptions });

/** Browser mode: the dropped File itself. Size is checked here before any byte goes out. */
export const UploadFromBytes = z.object({
  file: z
    .file()
    .max(CONTENT_LIMITS.uploadVideoBytes, `a file must be at most ${CONTENT_LIMITS.uploadVideoBytes / 1_000_000} MB`),
  ...uploadOptions,
});
