import { chooseMediaBinaries, versionText } from '../../shared/node/ffmpeg.ts';
import type { BinarySource } from '../../shared/node/ffmpeg.ts';

/**
 * `clipdesk doctor`'s ffmpeg lines (docs/cli.md): which ffmpeg and ffprobe run and where they come
 * from, chosen as every run chooses them (docs/architecture.md, "Bundled ffmpeg"); a warning only
 * when the two are not one build or the 2018 build is in use, in one line with its fix.
 */
export interface MediaCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

const VERSION_TIMEOUT_MS = 10_000;

/**
 * The major version of an ffmpeg build from its `-version` text: the release number when it has
 * one (`ffmpeg version 6.1.1`, `n7.0`), else the release that its libavutil major ships with
 * (git builds print `N-47683-g…`), else null.
 */
export function ffmpegMajor(text: string): number | null {
  const release = /version n?(\d+)\.\d/.exec(text);
  if (release) return Number(release[1]);
  const avutil = /libavutil\s+(\d+)\./.exec(text);
  if (!avutil) return null;
  const LIBAVUTIL_TO_RELEASE: Record<number, number> = { 55: 3, 56: 4, 57: 5, 58: 6, 59: 7, 60: 8 };
  return LIBAVUTIL_TO_RELEASE[Number(avutil[1])] ?? null;
}

interface Reading {
  check: MediaCheck;
  version: string | null;
  major: number | null;
  source: BinarySource;
}

export async function mediaChecks(
  env: NodeJS.ProcessEnv,
  ffmpegSetting: string | null,
  platform: NodeJS.Platform = process.platform,
): Promise<MediaCheck[]> {
  const chosen = chooseMediaBinaries(ffmpegSetting ? { ffmpegPath: ffmpegSetting } : {}, env);
  const ffmpeg = await readBinary('ffmpeg', chosen.ffmpegPath, chosen.ffmpegSource);
  const ffprobe = await readBinary('ffprobe', chosen.ffprobePath, chosen.ffprobeSource);
  const checks = [ffmpeg.check, ffprobe.check];
  const warning = pairWarning(ffmpeg, ffprobe, platform);
  if (warning) checks.push({ name: 'ffmpeg/ffprobe', status: 'warn', detail: warning });
  return checks;
}

function sourceText(tool: 'ffmpeg' | 'ffprobe', source: BinarySource): string {
  switch (source) {
    case 'explicit':
      return 'the ffmpeg setting';
    case 'environment':
      return tool === 'ffmpeg' ? 'CLIPDESK_FFMPEG' : 'CLIPDESK_FFPROBE';
    case 'path':
      return "the PATH's ffmpeg + ffprobe pair";
    case 'bundled':
      return 'the bundled build';
    case 'name':
      return 'the PATH (no bundled build)';
  }
}

async function readBinary(tool: 'ffmpeg' | 'ffprobe', path: string, source: BinarySource): Promise<Reading> {
  const text = await versionText(path, VERSION_TIMEOUT_MS).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error)),
  );
  if (text instanceof Error) {
    return {
      check: {
        name: tool,
        status: 'fail',
        detail: `cannot run ${path} (${sourceText(tool, source)}): ${text.message}`,
      },
      version: null,
      major: null,
      source,
    };
  }
  const version = /version (\S+)/.exec(text)?.[1] ?? null;
  const major = ffmpegMajor(text);
  const shown = version ?? 'unknown version';
  const withMajor = major === null || shown.startsWith(`${major}`) ? shown : `${shown} (${major}.x)`;
  return {
    check: { name: tool, status: 'ok', detail: `${withMajor} at ${path} (from ${sourceText(tool, source)})` },
    version,
    major,
    source,
  };
}

/** The one warning line, or null: the two are not one build, or ffmpeg is the 2018 (4.x) build. */
function pairWarning(ffmpeg: Reading, ffprobe: Reading, platform: NodeJS.Platform): string | null {
  const problems: string[] = [];
  if (ffmpeg.major !== null && ffprobe.major !== null && ffmpeg.major !== ffprobe.major)
    problems.push(`ffmpeg is major version ${ffmpeg.major} but ffprobe is ${ffprobe.major}`);
  else if (ffmpeg.version !== null && ffprobe.version !== null && ffmpeg.version !== ffprobe.version)
    problems.push(`ffmpeg is ${ffmpeg.version} but ffprobe is ${ffprobe.version}`);
  if (ffmpeg.major !== null && ffmpeg.major <= 4)
    problems.push(
      ffmpeg.source === 'bundled'
        ? 'the bundled ffmpeg is the 2018 build (4.x)'
        : `ffmpeg ${ffmpeg.version ?? ''} is version ${ffmpeg.major}, years out of date`.replace('  ', ' '),
    );
  if (problems.length === 0) return null;
  return `${problems.join('; ')}. Fix: ${fixFor(ffmpeg.source, ffprobe.source, platform)}`;
}

/** Advice that works as printed: a chosen path is changed where it was set; else the OS's package. */
function fixFor(ffmpeg: BinarySource, ffprobe: BinarySource, platform: NodeJS.Platform): string {
  const chosen = [ffmpeg, ffprobe].some((s) => s === 'explicit' || s === 'environment');
  if (chosen) return 'point CLIPDESK_FFMPEG and CLIPDESK_FFPROBE (or the ffmpeg setting) at one current build of both';
  const install =
    platform === 'darwin'
      ? 'brew install ffmpeg'
      : platform === 'win32'
        ? 'winget install Gyan.FFmpeg'
        : 'sudo apt install ffmpeg';
  return `${install} (Clipdesk then runs that pair from the PATH)`;
}
