import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a running app serves its IPC contract over loopback HTTP (browser mode's host), so that
 * another process on the same data folder (`clipdesk mcp`) can go through it instead of running
 * a second core on the same files: its jobs then appear in the app's queue and library at once.
 * The file holds the host's per-launch secret, so it is written for the owner only (0600), like
 * the rest of the data folder's secrets; see docs/agents.md.
 */
export interface AppEndpoint {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  secret: string;
  pid: number;
}

export const APP_ENDPOINT_FILE = 'app-endpoint.json';

const fileIn = (dataDir: string): string => path.join(dataDir, APP_ENDPOINT_FILE);

export function publishAppEndpoint(dataDir: string, endpoint: AppEndpoint): () => void {
  const file = fileIn(dataDir);
  writeFileSync(file, JSON.stringify(endpoint), { mode: 0o600 });
  return () => {
    // Only our own: a later app on the same folder may have replaced it.
    if (readAppEndpoint(dataDir)?.pid === endpoint.pid) rmSync(file, { force: true });
  };
}

/** The endpoint a live app published in `dataDir`, or null (none, unreadable, or its process is gone). */
export function readAppEndpoint(dataDir: string): AppEndpoint | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(fileIn(dataDir), 'utf8'));
  } catch {
    return null;
  }
  const e = parsed as Partial<AppEndpoint> | null;
  if (
    !e ||
    typeof e.origin !== 'string' ||
    !/^http:\/\/(127\.0\.0\.1|\[::1\]):\d+$/.test(e.origin) ||
    typeof e.port !== 'number' ||
    typeof e.secret !== 'string' ||
    typeof e.pid !== 'number'
  )
    return null;
  return processAlive(e.pid) ? (e as AppEndpoint) : null;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
