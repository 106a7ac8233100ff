import { homedir } from 'node:os';
import { join } from 'node:path';

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

export function defaultDownloadDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env['XDG_VIDEOS_DIR'] ?? join(homedir(), 'Videos'), 'Clipdesk');
}
