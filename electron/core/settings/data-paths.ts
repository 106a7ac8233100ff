import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The user data directory, where Electron's `app.getPath('userData')` puts it for "Clipdesk", so
 * the CLI and the app share settings and the Local engine's data.
 */
export function defaultUserDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (env['CLIPDESK_USER_DATA']) return env['CLIPDESK_USER_DATA'];
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Clipdesk');
  if (platform === 'win32') return join(env['APPDATA'] ?? join(homedir(), 'AppData', 'Roaming'), 'Clipdesk');
  return join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'Clipdesk');
}

/** The embedded Local engine keeps its database and media here. */
export function defaultEngineDataDir(userDataDir: string): string {
  return join(userDataDir, 'engine');
}

/**
 * A folder of the XDG user directories on Linux (`XDG_VIDEOS_DIR`, `XDG_PICTURES_DIR`): the
 * variable when set, else the line in `user-dirs.dirs` (what `xdg-user-dir` reads; its values
 * are `"$HOME/…"` or absolute), else null.
 */
export function xdgUserDir(name: 'PICTURES', env: NodeJS.ProcessEnv, home = homedir()): string | null {
  const key = `XDG_${name}_DIR`;
  if (env[key]) return env[key];
  let text: string;
  try {
    text = readFileSync(join(env['XDG_CONFIG_HOME'] ?? join(home, '.config'), 'user-dirs.dirs'), 'utf8');
  } catch {
    return null;
  }
  const value = new RegExp(`^${key}="([^"]*)"`, 'm').exec(text)?.[1];
  if (value === undefined) return null;
  const dir = value.replace(/^\$HOME(?=\/|$)/, home);
  // "$HOME/" alone means the directory is disabled; a relative value is not one the spec allows.
  return isAbsolute(dir) && dir.replace(/\/+$/, '') !== home ? dir : null;
}

/** Where videos are saved: `XDG_VIDEOS_DIR` when set, else `~/Videos`, with a Clipdesk folder in it. */
export function defaultDownloadDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env['XDG_VIDEOS_DIR'] ?? join(homedir(), 'Videos'), 'Clipdesk');
}

/** Where the OS keeps pictures: the XDG pictures folder on Linux, else `~/Pictures`. */
export function defaultPicturesDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const pictures = platform === 'linux' ? xdgUserDir('PICTURES', env) : null;
  return join(pictures ?? join(homedir(), 'Pictures'), 'Clipdesk');
}

/**
 * Where images are saved. The download folder holds videos; while it is the default one, images
 * go to the OS's pictures folder instead (docs/workflows.md "Retention, downloads and notifications in the app"). A folder the user
 * chose holds both, as before: it is the one place they asked for.
 */
export function imageDownloadDir(
  settings: { downloadDir: string },
  env: NodeJS.ProcessEnv = process.env,
  platform = process.platform,
): string {
  return settings.downloadDir === defaultDownloadDir(env) ? defaultPicturesDir(env, platform) : settings.downloadDir;
}
