// Bundles the Node side for packaging with esbuild: Electron main and preload (CommonJS, as a
// sandboxed preload must be one CommonJS file), the `clipdesk` CLI and the standalone service.
// Why esbuild directly rather than electron-vite or tsup: four entry points with fixed options need
// no plugin system, and the sources already run unbundled on Node 22 for development and tests.
import { build, type BuildOptions } from 'esbuild';
import { existsSync } from 'node:fs';

// Native modules and packages that carry binaries stay outside the bundle (electron-builder ships them).
const external = ['electron', '@napi-rs/keyring', '@ffmpeg-installer/ffmpeg', '@ffprobe-installer/ffprobe', 'fluent-ffmpeg'];

const common: BuildOptions = { bundle: true, platform: 'node', target: 'node22', sourcemap: true, external, logLevel: 'warning' };

const targets: { entry: string; outfile: string; format: 'cjs' | 'esm' }[] = [
  { entry: 'electron/main/index.ts', outfile: 'dist/electron/main.cjs', format: 'cjs' },
  { entry: 'electron/preload/index.ts', outfile: 'dist/electron/preload.cjs', format: 'cjs' },
  { entry: 'electron/cli/main.ts', outfile: 'dist/cli/clipdesk.mjs', format: 'esm' },
  { entry: 'server/cli/main.ts', outfile: 'dist/server/clipdesk-service.mjs', format: 'esm' },
];

const missing = targets.filter((t) => !existsSync(t.entry)).map((t) => t.entry);
if (missing.length > 0) {
  console.error(`Cannot bundle: missing entry point(s) ${missing.join(', ')}`);
  process.exit(1);
}

for (const t of targets) {
  // ESM bundles of CommonJS dependencies need a require() of their own.
  const banner = t.format === 'esm' ? { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" } : undefined;
  await build({ ...common, entryPoints: [t.entry], outfile: t.outfile, format: t.format, ...(banner ? { banner } : {}) });
  console.log(`built ${t.outfile}`);
}
