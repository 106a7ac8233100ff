import path from 'node:path';
import type { ExportFormat } from '../../../shared/ipc/schemas/library.ts';
import type { MediaTools } from '../media/index.ts';
import type { MediaTaskRunOptions } from './media-tasks.ts';
import { safeFileName } from './files.ts';

/** The file extension each export format writes. */
export const EXPORT_EXTENSIONS: Readonly<Record<ExportFormat, string>> = {
  mp4: 'mp4',
  webm: 'webm',
  gif: 'gif',
  frame: 'png',
  lastFrame: 'png',
  contactSheet: 'png',
};

/** Where an item's made file goes: `<folder>/exports/<item>-<name>`. */
export const itemOutput = (folder: string, id: string, name: string): string =>
  path.join(folder, 'exports', `${safeFileName(id)}-${name}`);

/** "Continue this shot": the last frame of an item, kept in the work folder. */
export const lastFrameOutput = (workDir: string, id: string): string =>
  path.join(workDir, 'frames', `${safeFileName(id)}-last.png`);

/** An export's file name: the format, a frame's time, and the format's extension. */
export const exportFileName = (format: ExportFormat, at: number | undefined): string =>
  `${format}${format === 'frame' ? `-${at ?? 0}` : ''}.${EXPORT_EXTENSIONS[format]}`;

/** What shapes an export besides its format: a frame's time, a contact sheet's grid. */
export interface ExportShape {
  at?: number | undefined;
  columns?: number | undefined;
  rows?: number | undefined;
}

/** Runs the media tool that writes `format` from `input` into `target`. */
export function exportMedia(
  media: MediaTools,
  format: ExportFormat,
  files: { input: string; target: string },
  shape: ExportShape,
  o: MediaTaskRunOptions,
): Promise<unknown> {
  const { input, target } = files;
  switch (format) {
    case 'mp4':
      return media.exportMp4(input, target, o);
    case 'webm':
      return media.exportWebm(input, target, o);
    case 'gif':
      return media.exportGif(input, target, o);
    case 'frame':
      return media.frameAt(input, target, shape.at ?? 0, o);
    case 'lastFrame':
      return media.lastFrame(input, target, o);
    case 'contactSheet': {
      const cols = shape.columns ?? 4;
      return media.contactSheet(input, target, { ...o, frames: cols * (shape.rows ?? 3), columns: cols });
    }
  }
}
