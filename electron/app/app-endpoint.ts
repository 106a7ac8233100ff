import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a running app serves its IPC contract over loopback HTTP (browser mode's host, or the
 * desktop window's endpoint host), so that another process on the same data folder
 * (`clipdesk mcp`) can go through it instead of running a second core on the same files: its jobs
 * then appear in the app's queue and library at once. The file holds the host's per-launch
 * secret, so it is written for the owner only (0600), like the rest of the data folder's secrets;
 * see docs/agents.md and docs/security.md.
 */
export interface AppEndpoint {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  secret: string;
  pid: number;
}

export const APP_ENDPOINT_FILE = 'app-endpoint.json';

/** What the data folder says about a running app. */
export type EndpointLookup =
  | { state: 'none' }
  | { state: 'live'; endpoint: AppEndpoint }
  /** A file no live app stands behind: its process is gone (killed, crashed) or it is unreadable. */
  | { state: 'stale'; reason: string; text: string };

export const appEndpointFile = (dataDir: string): string => path.join(dataDir, APP_ENDPOINT_FILE);

export function publishAppEndpoint(dataDir: string, endpoint: AppEndpoint): () => void {
  const file = appEndpointFile(dataDir);
  // Written aside and renamed: a reader never sees half a file (which it would take for stale).
  const temp = `${file}.${endpoint.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(endpoint), { mode: 0o600 });
  renameSync(temp, file);
  return () => {
    // Only our own: a later app on the same folder may have replaced it.
    if (readAppEndpoint(dataDir)?.pid === endpoint.pid) rmSync(file, { force: true });
  };
}

/** The endpoint a live app published in `dataDir`, or null (none, unreadable, or its process is gone). */
export function readAppEndpoint(dataDir: string): AppEndpoint | null {
  const found = lookupAppEndpoint(dataDir);
  return found.state === 'live' ? found.endpoint : null;
}

export function lookupAppEndpoint(dataDir: string): EndpointLookup {
  let text: string;
  try {
    text = readFileSync(appEndpointFile(dataDir), 'utf8');
  } catch {
    return { state: 'none' };
  }
  const endpoint = parseEndpoint(text);
  if (!endpoint) return { state: 'stale', reason: 'it is not an endpoint this version reads', text };
  if (!processAlive(endpoint.pid))
    return { state: 'stale', reason: `the app that wrote it (process ${endpoint.pid}) is gone`, text };
  return { state: 'live', endpoint };
}

/** Removes a stale file, unless an app has published a new one since it was read. */
export function removeStaleAppEndpoint(dataDir: string, staleText: string): void {
  const file = appEndpointFile(dataDir);
  try {
    if (readFileSync(file, 'utf8') === staleText) rmSync(file, { force: true });
  } catch {
    // Already gone.
  }
}

function parseEndpoint(text: string): AppEndpoint | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
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
  return e as AppEndpoint;
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
