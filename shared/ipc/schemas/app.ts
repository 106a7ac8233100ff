import { z } from 'zod';

export const AppMode = z.enum(['electron', 'browser']);
export type AppMode = z.infer<typeof AppMode>;

export const AppInfo = z.object({
  name: z.string(),
  version: z.string(),
  mode: AppMode,
  platform: z.string(),
  dataDir: z.string(),
  /** What this mode can do; the UI hides what it cannot. */
  capabilities: z.object({
    /** Uploads by local path (Electron drag and drop); otherwise by bytes. */
    pathUploads: z.boolean(),
    revealInFolder: z.boolean(),
    /** Native dialogs for the download folder and ffmpeg (settings.choosePath); otherwise typed paths. */
    pickDirectory: z.boolean(),
    osNotifications: z.boolean(),
  }),
});
export type AppInfo = z.infer<typeof AppInfo>;

export const OpenExternalInput = z.object({ url: z.string().min(1).max(2048) });
export const Ok = z.object({ ok: z.literal(true) });
