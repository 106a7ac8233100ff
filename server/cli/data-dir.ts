import { homedir } from 'node:os';
import { join } from 'node:path';

/** The OS's per-user data directory for the service (when `--data` is not given). */
export function defaultDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (platform === 'win32') return join(env['APPDATA'] ?? join(homedir(), 'AppData', 'Roaming'), 'clipdesk-service');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'clipdesk-service');
  const xdg = env['XDG_DATA_HOME'];
  return join(xdg && xdg.length > 0 ? xdg : join(homedir(), '.local', 'share'), 'clipdesk-service');
}
