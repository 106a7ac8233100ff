import { homedir } from 'node:os';
import path from 'node:path';

export const PRODUCT_NAME = 'Clipdesk';

/** The OS user-data directory, the same one Electron's `app.getPath('userData')` gives the app. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(homedir(), 'AppData', 'Roaming'), PRODUCT_NAME);
  if (platform === 'darwin') return path.join(homedir(), 'Library', 'Application Support', PRODUCT_NAME);
  return path.join(env.XDG_CONFIG_HOME ?? path.join(homedir(), '.config'), PRODUCT_NAME);
}

/** Downloads go beside the user's videos by default; with an explicit data dir, inside it (tests stay self-contained). */
export function defaultDownloadDir(dataDir: string, explicitDataDir: boolean): string {
  return explicitDataDir ? path.join(dataDir, 'downloads') : path.join(homedir(), 'Videos', PRODUCT_NAME);
}
