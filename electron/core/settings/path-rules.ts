import { constants as fsConstants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { versionText } from '../../../shared/node/ffmpeg.ts';

/**
 * Which folders may become the download folder, and which files the ffmpeg path.
 *
 * The download folder is served to the renderer (`/local-media/downloads/…`, `clipdesk-media://`)
 * and files under it are accepted as upload sources, so whoever sets it decides what the page can
 * read. In the desktop app it is set only from a native dialog; in browser mode the page types it,
 * and these rules are what stands between a hostile page and the disk. They apply to both.
 *
 * A folder is refused when it is (symlinks followed):
 * - relative, missing, or not a directory;
 * - the app's install root or data root, inside one, or an ancestor of one;
 * - the home folder itself or an ancestor of it, or inside a hidden folder of home (~/.ssh,
 *   ~/.config …: where credentials live);
 * - a system directory or inside one (/etc, /usr, /var, /proc, /run, C:\Windows …), or a bare
 *   mount point or drive root (/, /mnt, /media, /tmp, C:\).
 * Decided: a subfolder of home, a mounted volume (/mnt/x, /media/x, /run/media/<user>/x, D:\x)
 * or another ordinary folder (/tmp/x) is fine.
 */
export interface PathRulesContext {
  home: string;
  /** The app's install root (the repo or the packaged app) and its data root. */
  appRoots: readonly string[];
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
}

export type PathCheck = { ok: true; path: string } | { ok: false; reason: string };

const POSIX_SYSTEM = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/snap',
  '/sys',
  '/usr',
  '/var',
];
const MAC_SYSTEM = ['/System', '/Library', '/private', '/Applications', '/cores'];
/** Refused as themselves only: the folders other volumes and users hang from. */
const POSIX_BARE = ['/', '/home', '/mnt', '/media', '/opt', '/srv', '/tmp', '/Users', '/Volumes'];
/** Removable volumes on Linux: /run/media/<user>/<volume>, allowed from that depth on. */
const RUN_MEDIA = '/run/media';

interface SystemDirs {
  inside: string[];
  bare: string[];
}

function systemDirectories(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): SystemDirs {
  if (platform === 'win32') {
    const drive = (env['SystemDrive'] ?? 'C:').replace(/\\$/, '');
    const inside = [
      env['SystemRoot'] ?? `${drive}\\Windows`,
      env['ProgramFiles'] ?? `${drive}\\Program Files`,
      env['ProgramFiles(x86)'] ?? `${drive}\\Program Files (x86)`,
      env['ProgramData'] ?? `${drive}\\ProgramData`,
    ];
    return { inside, bare: [`${drive}\\`, `${drive}\\Users`] };
  }
  return { inside: [...POSIX_SYSTEM, ...(platform === 'darwin' ? MAC_SYSTEM : [])], bare: POSIX_BARE };
}

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** The path from `parent` down to `child`, or null when `child` is not `parent` or inside it. */
function below(p: path.PlatformPath, child: string, parent: string, caseless: boolean): string[] | null {
  const norm = (s: string): string => (caseless ? s.toLowerCase() : s);
  const rel = p.relative(norm(parent), norm(child));
  if (rel === '') return [];
  if (rel === '..' || rel.startsWith(`..${p.sep}`) || p.isAbsolute(rel)) return null;
  return rel.split(p.sep);
}

/**
 * The rules that need no file system: used on every typed or chosen folder (after realpath) and on
 * the stored setting at startup, so a folder set before these rules existed is not served either.
 * null: acceptable.
 */
export function folderProblem(folder: string, ctx: PathRulesContext): string | null {
  const platform = ctx.platform ?? process.platform;
  const p = pathApi(platform);
  const caseless = platform === 'win32' || platform === 'darwin';
  const inside = (child: string, parent: string): string[] | null => below(p, child, p.resolve(parent), caseless);
  if (folder.includes('\0') || !p.isAbsolute(folder)) return 'it must be an absolute path';
  const dir = p.resolve(folder);
  const system = systemDirectories(platform, ctx.env ?? process.env);
  if (system.bare.some((b) => inside(dir, b)?.length === 0))
    return 'it is a drive, mount or system folder; choose a folder inside it';
  if (inside(ctx.home, dir)) return 'it is your home folder (or contains it); choose a folder inside it';
  for (const root of ctx.appRoots) {
    if (inside(dir, root) || inside(root, dir)) return "it is (or contains) the app's own install or data folder";
  }
  // A home under a system folder (/root, /var/lib/<service>) still has usable subfolders.
  const inHome = inside(dir, ctx.home);
  if (inHome) {
    const first = inHome[0] ?? '';
    return first.startsWith('.')
      ? `it is inside the hidden folder ~${p.sep}${first}, where settings and keys live`
      : null;
  }
  const media = platform === 'linux' ? inside(dir, RUN_MEDIA) : null;
  if (media) return media.length >= 2 ? null : 'it is a mount folder; choose a volume or a folder inside it';
  const sys = system.inside.find((s) => inside(dir, s));
  return sys ? `it is inside the system folder ${sys}` : null;
}

/** A download folder typed in the page or chosen in a dialog: the real, existing directory, or why not. */
export async function checkDownloadFolder(input: string, ctx: PathRulesContext): Promise<PathCheck> {
  const given = folderProblem(input, ctx);
  if (given) return { ok: false, reason: given };
  const real = await realpath(input).catch(() => null);
  if (real === null) return { ok: false, reason: 'it does not exist' };
  if (!(await stat(real)).isDirectory()) return { ok: false, reason: 'it is not a folder' };
  const problem = folderProblem(real, ctx);
  return problem ? { ok: false, reason: problem } : { ok: true, path: real };
}

/**
 * An ffmpeg binary: an absolute path to an executable regular file outside the app's folders
 * (the download folder included: downloads are files the service chose) that answers `-version`
 * as ffmpeg. A typed path must also be named ffmpeg (`ffmpeg.exe`); a file the user picked in a
 * native dialog may have any name.
 */
export async function checkFfmpegPath(
  input: string,
  ctx: PathRulesContext & { downloadDir: string; requireName: boolean },
): Promise<PathCheck> {
  const platform = ctx.platform ?? process.platform;
  const p = pathApi(platform);
  const caseless = platform === 'win32' || platform === 'darwin';
  if (input.includes('\0') || !p.isAbsolute(input)) return { ok: false, reason: 'it must be an absolute path' };
  const real = await realpath(input).catch(() => null);
  if (real === null) return { ok: false, reason: 'it does not exist' };
  if (!(await stat(real)).isFile()) return { ok: false, reason: 'it is not a file' };
  if (ctx.requireName && !/^ffmpeg(\.exe)?$/i.test(p.basename(real)))
    return { ok: false, reason: 'the file must be named ffmpeg' };
  for (const root of [...ctx.appRoots, ctx.downloadDir]) {
    if (below(p, real, p.resolve(root), caseless)) return { ok: false, reason: "it is inside the app's own folders" };
  }
  const executable = await access(real, platform === 'win32' ? fsConstants.R_OK : fsConstants.X_OK).then(
    () => true,
    () => false,
  );
  if (!executable) return { ok: false, reason: 'it is not executable' };
  const version = await versionText(real).catch(() => '');
  if (!/^ffmpeg version /.test(version)) return { ok: false, reason: 'it does not answer as ffmpeg' };
  return { ok: true, path: real };
}
