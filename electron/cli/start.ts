// `npm start`: the desktop app when an Electron runtime exists, else browser mode.
// `npm start -- --browser [--port N] [--data DIR] [--no-open]` forces browser mode;
// `--key-store file` keeps keys in the key file instead of the OS keychain (docs/security.md).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { findBrowser, hasDisplay, openAppWindow, startBrowserMode } from '../host/browser-mode.ts';
import { childEnv } from '../../shared/node/child-env.ts';
import { killAll } from '../../shared/node/ffmpeg.ts';
import { exitOnSignals, onceShutdown } from '../../shared/node/shutdown.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function usage(message: string): never {
  console.error(
    `${message}\nusage: npm start -- [--browser] [--port N] [--data DIR] [--no-open] [--key-store keychain|file]`,
  );
  process.exit(2);
}

let args;
try {
  args = parseArgs({
    options: {
      browser: { type: 'boolean', default: false },
      port: { type: 'string' },
      data: { type: 'string' },
      'no-open': { type: 'boolean', default: false },
      'key-store': { type: 'string' },
    },
    strict: true,
  }).values;
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}

/** The Electron binary, when the `electron` package has one (its download is lazy and may have failed). */
function electronBinary(): string | null {
  try {
    const bin = createRequire(import.meta.url)('electron') as unknown;
    return typeof bin === 'string' && existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

function runNpm(script: string): void {
  const result = spawnSync('npm', ['run', script], {
    cwd: root,
    stdio: 'inherit',
    // The build needs npm's and Node's settings, not the keys or passphrase given to the app.
    env: childEnv([], process.env, ['npm_', 'NODE_']),
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    console.error(`npm run ${script} failed`);
    process.exit(1);
  }
}

const electron = args.browser ? null : electronBinary();
if (electron) {
  if (!existsSync(path.join(root, 'dist', 'electron', 'main.cjs'))) runNpm('build');
  const switches = [
    ...(args.data ? [`--user-data-dir=${path.resolve(args.data)}`] : []),
    ...(args['key-store'] ? [`--key-store=${args['key-store']}`] : []),
  ];
  // Electron's main is the app itself: it gets this environment whole, as a launch from a shell
  // would (CLIPDESK_KEY_PASSPHRASE is for it), and passes on to its own children only what each needs.
  const child = spawn(electron, [root, ...switches], {
    stdio: 'inherit',
  });
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  if (!args.browser) console.error('No Electron runtime here: starting browser mode.');
  let port: number | undefined;
  if (args.port !== undefined) {
    port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`--port must be 0..65535, got ${args.port}`);
  }
  if (!existsSync(path.join(root, 'dist', 'renderer', 'index.html'))) {
    console.error('Building the renderer (dist/renderer is missing)…');
    runNpm('build:renderer');
  }
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const mode = await startBrowserMode({
    root,
    version: pkg.version,
    ...(port === undefined ? {} : { port }),
    ...(args.data ? { dataDir: args.data } : {}),
    ...(args['key-store'] ? { keyStore: args['key-store'] } : {}),
  });
  console.log(`open ${mode.host.url}`);
  console.error(`Clipdesk (browser mode) · data: ${mode.dataDir}`);
  const browser = findBrowser();
  if (!args['no-open'] && !process.env.CLIPDESK_NO_OPEN && browser && hasDisplay())
    openAppWindow(browser, mode.host.url, mode.dataDir);
  // Stops the host, then awaits the core's dispose (ffmpeg children killed and awaited) before exiting.
  let failed = false;
  const shutdown = onceShutdown(
    async () => {
      await mode.close();
      await killAll(); // one app in this process: whatever is left in the process-wide registry is ours
    },
    {
      onError: (error) => {
        failed = true;
        console.error(`shutdown: ${error instanceof Error ? error.message : String(error)}`);
      },
    },
  );
  exitOnSignals(process, shutdown, (code) => process.exit(failed && code === 0 ? 1 : code));
}
