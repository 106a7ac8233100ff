import { createRequire } from 'node:module';

export interface MediaBinaries {
  ffmpegPath: string;
  ffprobePath: string;
}

const require = createRequire(import.meta.url);

/** The binaries shipped by `@ffmpeg-installer/*` and `@ffprobe-installer/*`, unless overridden. */
export function resolveMediaBinaries(overrides: Partial<MediaBinaries> = {}): MediaBinaries {
  return {
    ffmpegPath: overrides.ffmpegPath ?? (require('@ffmpeg-installer/ffmpeg') as { path: string }).path,
    ffprobePath: overrides.ffprobePath ?? (require('@ffprobe-installer/ffprobe') as { path: string }).path,
  };
}
