import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

/**
 * Which ffmpeg and ffprobe run (docs/architecture.md, "Bundled ffmpeg"), for each tool:
 * 1. an explicit path (the ffmpeg setting, a caller's own);
 * 2. `CLIPDESK_FFMPEG` / `CLIPDESK_FFPROBE`;
 * 3. the ffmpeg + ffprobe pair on the PATH, when both are there and report the same version:
 *    what the OS keeps patched (Debian, Homebrew, winget) beats a build frozen in a package;
 * 4. the bundled build: the packaged app's `resources/bin`, else the npm packages;
 * 5. the bare names, for the PATH to find.
 */
export interface MediaBinaries {
  ffmpegPath: string;
  ffprobePath: string;
}

/** Where a binary came from, in the order above. */
export type BinarySource = 'explicit' | 'environment' | 'path' | 'bundled' | 'name';

export interface ChosenBinaries extends MediaBinaries {
  ffmpegSource: BinarySource;
  ffprobeSource: BinarySource;
}

/** The PATH's pair and the version both report. */
export interface PathPair extends MediaBinaries {
  version: string;
}

const require = createRequire(import.meta.url);
/** The packaged app's own build (electron-builder's extraResources), set once at launch. */
let packaged: MediaBinaries | undefined;
const pairs = new Map<string, PathPair | null>();
const VERSION_TIMEOUT_MS = 5_000;

/** The packaged app's build in `resources/bin`: the bundled build in place of the npm packages. */
export function useBundledMediaBinaries(binaries: MediaBinaries | undefined): void {
  packaged = binaries;
}

/**
 * The build electron-builder's extraResources put in `<resources>/bin`, when both tools are there
 * (the packaged app, its main process and its engine's utility process alike); else undefined.
 */
export function packagedMediaBinaries(
  resourcesPath: string | undefined,
  platform: NodeJS.Platform = process.platform,
): MediaBinaries | undefined {
  if (!resourcesPath) return undefined;
  const exe = platform === 'win32' ? '.exe' : '';
  const binaries = {
    ffmpegPath: join(resourcesPath, 'bin', `ffmpeg${exe}`),
    ffprobePath: join(resourcesPath, 'bin', `ffprobe${exe}`),
  };
  return isFile(binaries.ffmpegPath) && isFile(binaries.ffprobePath) ? binaries : undefined;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

export function chooseMediaBinaries(
  overrides: Partial<MediaBinaries> = {},
  env: NodeJS.ProcessEnv = process.env,
): ChosenBinaries {
  const pair = pathPair(env);
  const pick = (
    explicit: string | undefined,
    fromEnv: string | undefined,
    onPath: string | undefined,
    bundled: string | undefined,
    name: string,
  ): [string, BinarySource] =>
    explicit
      ? [explicit, 'explicit']
      : fromEnv
        ? [fromEnv, 'environment']
        : onPath
          ? [onPath, 'path']
          : bundled
            ? [bundled, 'bundled']
            : [name, 'name'];
  const [ffmpegPath, ffmpegSource] = pick(
    overrides.ffmpegPath,
    env['CLIPDESK_FFMPEG'],
    pair?.ffmpegPath,
    packaged?.ffmpegPath ?? installerPath('@ffmpeg-installer/ffmpeg'),
    'ffmpeg',
  );
  const [ffprobePath, ffprobeSource] = pick(
    overrides.ffprobePath,
    env['CLIPDESK_FFPROBE'],
    pair?.ffprobePath,
    packaged?.ffprobePath ?? installerPath('@ffprobe-installer/ffprobe'),
    'ffprobe',
  );
  return { ffmpegPath, ffprobePath, ffmpegSource, ffprobeSource };
}

export function ffmpegPath(override?: string): string {
  return chooseMediaBinaries(override ? { ffmpegPath: override } : {}).ffmpegPath;
}

export function ffprobePath(override?: string): string {
  return chooseMediaBinaries(override ? { ffprobePath: override } : {}).ffprobePath;
}

export function resolveMediaBinaries(overrides: Partial<MediaBinaries> = {}): MediaBinaries {
  const { ffmpegPath: ffmpeg, ffprobePath: ffprobe } = chooseMediaBinaries(overrides);
  return { ffmpegPath: ffmpeg, ffprobePath: ffprobe };
}

/**
 * ffmpeg and ffprobe on the PATH, when both are found and print the same version; else null.
 * Asked once per PATH value in a process (two `-version` runs, bounded), so every run after the
 * first resolves at once.
 */
export function pathPair(env: NodeJS.ProcessEnv = process.env): PathPair | null {
  const searched = env['PATH'] ?? env['Path'] ?? '';
  const key = `${process.platform}\u0000${searched}\u0000${env['PATHEXT'] ?? ''}`;
  const cached = pairs.get(key);
  if (cached !== undefined) return cached;
  const ffmpeg = findOnPath('ffmpeg', env);
  const ffprobe = findOnPath('ffprobe', env);
  const ffmpegVersion = ffmpeg ? reportedVersion(ffmpeg, 'ffmpeg', env) : null;
  const ffprobeVersion = ffprobe ? reportedVersion(ffprobe, 'ffprobe', env) : null;
  const pair =
    ffmpeg && ffprobe && ffmpegVersion !== null && ffmpegVersion === ffprobeVersion
      ? { ffmpegPath: ffmpeg, ffprobePath: ffprobe, version: ffmpegVersion }
      : null;
  pairs.set(key, pair);
  return pair;
}

/** The version a `-version` text's first line names (`ffmpeg version 7.1.1-1 Copyright …` → `7.1.1-1`). */
export function versionIn(text: string, tool: 'ffmpeg' | 'ffprobe'): string | null {
  return new RegExp(`^${tool} version (\\S+)`).exec(text.trimStart())?.[1] ?? null;
}

function reportedVersion(binary: string, tool: 'ffmpeg' | 'ffprobe', env: NodeJS.ProcessEnv): string | null {
  // The child gets the PATH it was found on (and Windows its system folder), nothing else of
  // this process's environment: no key or passphrase reaches it.
  const childEnv: NodeJS.ProcessEnv = { PATH: env['PATH'] ?? env['Path'] ?? '' };
  if (env['SystemRoot']) childEnv['SystemRoot'] = env['SystemRoot'];
  try {
    const out = execFileSync(binary, ['-version'], {
      encoding: 'utf8',
      timeout: VERSION_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: childEnv,
      windowsHide: true,
    });
    return versionIn(out, tool);
  } catch {
    return null;
  }
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | null {
  const dirs = (env['PATH'] ?? env['Path'] ?? '').split(delimiter).filter((d) => d.length > 0);
  const extensions =
    process.platform === 'win32' ? (env['PATHEXT'] ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean) : [''];
  for (const dir of dirs)
    for (const ext of extensions) {
      const candidate = join(dir, `${name}${ext.toLowerCase()}`);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here: the next folder.
      }
    }
  return null;
}

function installerPath(pkg: string): string | undefined {
  try {
    const mod = require(pkg) as { path?: unknown };
    if (typeof mod.path === 'string' && mod.path.length > 0) return mod.path;
  } catch {
    // The installer throws when its platform package is missing; fall through to the PATH.
  }
  return undefined;
}
