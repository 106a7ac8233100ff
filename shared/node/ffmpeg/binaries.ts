import { createRequire } from 'node:module';

/**
 * Which ffmpeg and ffprobe run. An explicit path wins (a user may point the app at another
 * ffmpeg; the packaged app ships its own), then `CLIPDESK_FFMPEG` / `CLIPDESK_FFPROBE`, then the
 * npm packages that carry static builds, then the names on the PATH.
 */
export interface MediaBinaries {
  ffmpegPath: string;
  ffprobePath: string;
}

const require = createRequire(import.meta.url);

export function ffmpegPath(override?: string): string {
  if (override) return override;
  return process.env['CLIPDESK_FFMPEG'] || installerPath('@ffmpeg-installer/ffmpeg', 'ffmpeg');
}

export function ffprobePath(override?: string): string {
  if (override) return override;
  return process.env['CLIPDESK_FFPROBE'] || installerPath('@ffprobe-installer/ffprobe', 'ffprobe');
}

export function resolveMediaBinaries(overrides: Partial<MediaBinaries> = {}): MediaBinaries {
  return { ffmpegPath: ffmpegPath(overrides.ffmpegPath), ffprobePath: ffprobePath(overrides.ffprobePath) };
}

function installerPath(pkg: string, name: string): string {
  try {
    const mod = require(pkg) as { path?: unknown };
    if (typeof mod.path === 'string' && mod.path.length > 0) return mod.path;
  } catch {
    // The installer throws when its platform package is missing; fall through to the PATH.
  }
  return name;
}
