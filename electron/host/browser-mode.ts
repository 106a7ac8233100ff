import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createApp, type App } from '../app/composition-root.ts';
import { defaultDataDir } from '../app/paths.ts';
import { browserPlatform } from '../app/platform.ts';
import { HTTP_IPC } from '../../shared/ipc/client.ts';
import { childEnv } from '../../shared/node/child-env.ts';
import { startAppEndpoint } from './app-endpoint-host.ts';
import type { Host } from './server.ts';
import type { SecretStore } from '../core/secrets/index.ts';

export interface BrowserModeOptions {
  /** Repository (or app) root holding dist/renderer. */
  root: string;
  port?: number;
  dataDir?: string;
  version: string;
  /** Background work (retention checks, first sync); default on. */
  background?: boolean;
  /** Where keys are kept; default the OS keychain (benchmarks pass one of their own). */
  secrets?: SecretStore;
  /** `npm start -- --key-store file`: the key file instead of the OS keychain. */
  keyStore?: string;
}

export interface BrowserMode {
  app: App;
  host: Host;
  dataDir: string;
  close(): Promise<void>;
}

/** Runs the app's core behind the loopback host. `npm start -- --browser` and the e2e tests use it. */
export async function startBrowserMode(options: BrowserModeOptions): Promise<BrowserMode> {
  const dataDir = path.resolve(options.dataDir ?? defaultDataDir());
  mkdirSync(dataDir, { recursive: true });
  const app = createApp({
    dataDir,
    platform: browserPlatform,
    version: options.version,
    ...(options.dataDir === undefined ? {} : { downloadDirOverride: path.join(dataDir, 'downloads') }),
    mediaUrlPrefix: HTTP_IPC.localMediaPrefix,
    ...(options.background === undefined ? {} : { background: options.background }),
    ...(options.secrets === undefined ? {} : { secrets: options.secrets }),
    ...(options.keyStore === undefined ? {} : { keyStore: options.keyStore }),
  });
  let host: Host;
  try {
    // `clipdesk mcp` on the same data folder goes through this host (app-endpoint-host.ts).
    host = await startAppEndpoint(dataDir, {
      router: app.router,
      staticDir: path.join(options.root, 'dist', 'renderer'),
      mediaRoots: app.mediaRoots,
      ...(options.port === undefined ? {} : { port: options.port }),
    });
  } catch (error) {
    await app.dispose();
    throw error;
  }
  return {
    app,
    host,
    dataDir,
    async close() {
      await host.close();
      await app.dispose();
    },
  };
}

const BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

/** A Chromium-family browser to open the app window with, or null. */
export function findBrowser(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.CLIPDESK_BROWSER) return existsSync(env.CLIPDESK_BROWSER) ? env.CLIPDESK_BROWSER : null;
  return BROWSERS.find((b) => existsSync(b)) ?? null;
}

export function hasDisplay(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * What the browser window needs beside the base (shared/node/child-env.ts): the display (X11 or
 * Wayland), the session bus and the user's XDG folders. Not the keys or the passphrase the host
 * process holds (docs/security.md).
 */
const BROWSER_VARIABLES = ['DISPLAY', 'WAYLAND_DISPLAY', 'XAUTHORITY', 'DBUS_SESSION_BUS_ADDRESS'];

/** Chromium in app mode (a window without browser chrome), with its own profile in the data dir. */
export function openAppWindow(browser: string, url: string, dataDir: string): void {
  const child = spawn(
    browser,
    [
      `--app=${url}`,
      `--user-data-dir=${path.join(dataDir, 'browser-profile')}`,
      '--no-first-run',
      '--no-default-browser-check',
    ],
    {
      detached: true,
      stdio: 'ignore',
      env: childEnv(BROWSER_VARIABLES, process.env, ['XDG_']),
    },
  );
  child.on('error', () => undefined);
  child.unref();
}
