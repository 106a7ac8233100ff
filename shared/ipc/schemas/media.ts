import { z } from 'zod';

export const MediaPath = z.object({ path: z.string().min(1).max(4096) });

export const ProbeResult = z.object({
  mime: z.string(),
  bytes: z.number().int().nonnegative(),
  /** Seconds; 0 for still images. */
  duration: z.number().nonnegative(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  videoCodec: z.string().nullable(),
  audioCodec: z.string().nullable(),
});
export type ProbeResult = z.infer<typeof ProbeResult>;

export const TrimInput = z
  .object({ id: z.string().min(1).max(200), start: z.number().nonnegative(), end: z.number().positive() })
  .refine((t) => t.end > t.start, { message: 'end must be after start', path: ['end'] });
