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

/**
 * What the page may change directly. The download folder and the ffmpeg path are not here: they
 * decide which files the app serves and runs, so they change only through the `settings.*Path`
 * routes (a native dialog in the app; a typed, checked and confirmed path in browser mode).
 */
export const SettingsPatch = z
  .object({
    theme: Theme,
    namingPattern: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .refine((s) => s.includes('{id}'), 'the naming pattern must contain {id} so names stay unique'),
    retentionPolicy: RetentionPolicy,
    retentionWarnDays: z.number().int().min(0).max(365),
    notifications: z.boolean(),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof SettingsPatch>;

/** The settings that are paths on this machine. */
export const PathSetting = z.enum(['downloadDir', 'ffmpegPath']);
export type PathSetting = z.infer<typeof PathSetting>;

export const ChoosePathInput = z.object({ field: PathSetting });
/** `chosen: false`: the dialog was cancelled and nothing changed. */
export const ChoosePathResult = z.object({ chosen: z.boolean(), settings: Settings });
export type ChoosePathResult = z.infer<typeof ChoosePathResult>;

/** A path typed in browser mode, to check before the user confirms it. */
export const TypedPath = z.object({ field: PathSetting, path: pathText });
/** The real path (symlinks followed) the setting would hold, for the confirm step to show. */
export const CheckedPath = z.object({ path: z.string() });

/** null restores the default (the bundled ffmpeg, the default download folder). */
export const SetPathInput = z.object({ field: PathSetting, path: pathText.nullable() });
