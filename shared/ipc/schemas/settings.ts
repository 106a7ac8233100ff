import { z } from 'zod';

export const Theme = z.enum(['light', 'dark', 'system']);
export type Theme = z.infer<typeof Theme>;

/** Which items the retention guard downloads before the service deletes them. */
export const RetentionPolicy = z.enum(['off', 'favourites', 'mine']);
export type RetentionPolicy = z.infer<typeof RetentionPolicy>;

export const DEFAULT_NAMING_PATTERN = '{yyyy}-{mm}/{model}/{createdAt}-{id}.{ext}';

/** Durable settings held by main. The renderer keeps only UI preferences of its own. */
export const Settings = z.object({
  theme: Theme,
  /** Absolute path of the download folder. */
  downloadDir: z.string(),
  namingPattern: z.string(),
  retentionPolicy: RetentionPolicy,
  /** Warn this many days before the service deletes an item. */
  retentionWarnDays: z.number().int().min(0).max(365),
  /** null: the bundled ffmpeg. */
  ffmpegPath: z.string().nullable(),
  notifications: z.boolean(),
});
export type Settings = z.infer<typeof Settings>;

const pathText = z.string().trim().min(1).max(4096);

export const SettingsPatch = z
  .object({
    theme: Theme,
    downloadDir: pathText,
    namingPattern: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .refine((s) => s.includes('{id}'), 'the naming pattern must contain {id} so names stay unique'),
    retentionPolicy: RetentionPolicy,
    retentionWarnDays: z.number().int().min(0).max(365),
    ffmpegPath: pathText.nullable(),
    notifications: z.boolean(),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof SettingsPatch>;
