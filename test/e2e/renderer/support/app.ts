import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser, BrowserContext, Page, Response } from '@playwright/test';

/**
 * The real app in browser mode (`npm start -- --browser --port 0 --data <tmp>`): the same core,
 * the embedded Local engine and real ffmpeg. Each test gets its own data directory, removed after.
 */
export interface RunningApp {
  url: string;
  dataDir: string;
  /** Everything the app printed, for failure messages. */
  log: string[];
  stop(): Promise<void>;
}

export interface AppOptions {
  env?: Record<string, string>;
  args?: string[];
  /** Writes into the data directory before the app starts (a seeded library, say). */
  prepare?: (dataDir: string) => Promise<void> | void;
  /** Run inside its own D-Bus session with an unlocked gnome-keyring, so keys can be stored. */
  keychain?: boolean;
}

const START_TIMEOUT_MS = 120_000;

export async function startApp(options: AppOptions = {}): Promise<RunningApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-e2e-'));
  await options.prepare?.(dataDir);
  const appArgs = [
    'electron/cli/start.ts',
    '--browser',
    '--port',
    '0',
    '--data',
    dataDir,
    '--no-open',
    ...(options.args ?? []),
  ];
  const [command, args] = options.keychain
    ? [
        'dbus-run-session',
        [
          '--',
          'sh',
          '-c',
          `echo -n e2e | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec "$0" "$@"`,
          process.execPath,
          ...appArgs,
        ],
      ]
    : [process.execPath, appArgs];
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: {
      ...process.env,
      CLIPDESK_NO_OPEN: '1',
      // A keyring of its own: a fresh home, so the unlock password is the one given here.
      ...(options.keychain
        ? { HOME: dataDir, XDG_DATA_HOME: join(dataDir, 'xdg-data'), XDG_RUNTIME_DIR: dataDir }
        : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const log: string[] = [];
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  createInterface({ input: child.stderr! }).on('line', (l) => log.push(l));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the app did not print its URL in ${START_TIMEOUT_MS} ms:\n${log.join('\n')}`)),
      START_TIMEOUT_MS,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      log.push(line);
      const m = /^open (http:\/\/127\.0\.0\.1:\d+\/\S*)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the app exited with ${code} before printing its URL:\n${log.join('\n')}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, dataDir, log, stop };
}

/**
 * A failed GET of an asset (icon, chunk, thumbnail) is a defect too; IPC calls answer errors on
 * purpose. Returns the line to report, or null.
 */
export function assetFailure(response: Response): string | null {
  const failed =
    response.status() >= 400 &&
    response.request().method() === 'GET' &&
    !new URL(response.url()).pathname.startsWith('/rpc/');
  return failed ? `HTTP ${response.status()} GET ${response.url()}` : null;
}

/** A fresh browser context on the app, with page errors and failed asset loads collected. */
export async function openApp(
  browser: Browser,
  app: RunningApp,
  viewport = { width: 1440, height: 900 },
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true, colorScheme: 'dark' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('response', (r) => {
    const failure = assetFailure(r);
    if (failure) errors.push(failure);
  });
  await page.goto(app.url);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return { context, page, errors };
}
