// Bundles the Node side for packaging with esbuild: Electron main and preload (CommonJS, as a
// sandboxed preload must be one CommonJS file), the Local engine's process, the `clipdesk` CLI and
// the standalone service.
// Why esbuild directly rather than electron-vite or tsup: five entry points with fixed options need
// no plugin system, and the sources already run unbundled on Node 22 for development and tests.
import { build, type BuildOptions } from 'esbuild';
import { existsSync } from 'node:fs';

// Native modules and packages that carry binaries stay outside the bundle (electron-builder ships them).
const external = [
  'electron',
  '@napi-rs/keyring',
  '@ffmpeg-installer/ffmpeg',
  '@ffprobe-installer/ffprobe',
  'fluent-ffmpeg',
];

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  sourcemap: true,
  external,
  logLevel: 'warning',
};

const targets: { entry: string; outfile: string; format: 'cjs' | 'esm' }[] = [
  { entry: 'electron/main/index.ts', outfile: 'dist/electron/main.cjs', format: 'cjs' },
  { entry: 'electron/preload/index.ts', outfile: 'dist/electron/preload.cjs', format: 'cjs' },
  // The Local engine's own process (electron/core/engine/engine-host.ts finds it beside main.cjs).
  { entry: 'electron/core/engine/engine-child-entry.ts', outfile: 'dist/electron/local-engine.mjs', format: 'esm' },
  { entry: 'electron/cli/main.ts', outfile: 'dist/cli/clipdesk.mjs', format: 'esm' },
  { entry: 'server/cli/main.ts', outfile: 'dist/server/clipdesk-service.mjs', format: 'esm' },
];

const missing = targets.filter((t) => !existsSync(t.entry)).map((t) => t.entry);
if (missing.length > 0) {
  console.error(`Cannot bundle: missing entry point(s) ${missing.join(', ')}`);
  process.exit(1);
}

for (const t of targets) {
  // ESM bundles of CommonJS dependencies need a require() of their own; CommonJS bundles need an
  // import.meta.url (esbuild leaves it empty there) for the createRequire() calls in our sources.
  const shim: BuildOptions =
    t.format === 'esm'
      ? {
          banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
        }
      : {
          banner: { js: "const __cjsImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
          define: { 'import.meta.url': '__cjsImportMetaUrl' },
        };
  await build({ ...common, ...shim, entryPoints: [t.entry], outfile: t.outfile, format: t.format });
  console.log(`built ${t.outfile}`);
}

// The service's PostgreSQL schema files are read beside the module that applies them
// (server/storage/pg/migrate.ts), which in the bundle is dist/server/.
const { cpSync, readdirSync } = await import('node:fs');
for (const file of readdirSync('server/storage/pg').filter((f) => f.endsWith('.sql')))
  cpSync(`server/storage/pg/${file}`, `dist/server/${file}`);

// Load each bundle once: a bundle can build cleanly and still throw on load (as CommonJS bundles
// did with an empty import.meta.url). Main and preload stop at require('electron') when no
// Electron binary exists, which is expected here; anything else fails the build.
const { spawnSync } = await import('node:child_process');
const checks: { file: string; args: string[]; electron: boolean }[] = [
  { file: 'dist/cli/clipdesk.mjs', args: ['--help'], electron: false },
  { file: 'dist/server/clipdesk-service.mjs', args: ['--help'], electron: false },
  { file: 'dist/electron/main.cjs', args: [], electron: true },
];
for (const c of checks) {
  const run = spawnSync(
    process.execPath,
    c.electron ? ['-e', `require(${JSON.stringify(`./${c.file}`)})`] : [c.file, ...c.args],
    {
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  const output = `${run.stdout}${run.stderr}`;
  const ok = run.status === 0 || (c.electron && /Electron failed to install correctly/.test(output));
  if (!ok) {
    console.error(`bundle ${c.file} does not load:\n${output}`);
    process.exit(1);
  }
  console.log(`loaded ${c.file}`);
}

// The Local engine's bundle runs only as a child with a channel: start it on a temp data folder as
// the app does, wait for the service to listen, then close it.
{
  const { fork } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'clipdesk-build-engine-'));
  const child = fork('dist/electron/local-engine.mjs', [], { execArgv: [], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const result = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve('no answer within 30 s'), 30_000);
    child.on('message', (m: { type?: string; error?: { message?: string } }) => {
      if (m.type === 'started') child.send({ type: 'close' });
      if (m.type === 'failed') resolve(`failed: ${m.error?.message}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? 'ok' : `exited ${code}`);
    });
    child.send({ type: 'start', options: { dataDir, providerEnv: {} } });
  });
  child.kill();
  rmSync(dataDir, { recursive: true, force: true });
  if (result !== 'ok') {
    console.error(`bundle dist/electron/local-engine.mjs does not run: ${result}\n${output}`);
    process.exit(1);
  }
  console.log('ran dist/electron/local-engine.mjs');
}
