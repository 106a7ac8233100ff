// Runs benchmarks: `npm run bench` runs every bench/*.ts; `npm run bench -- NAME` runs the one
// named NAME, or every benchmark in the group NAME (files named NAME-*.ts, e.g. `service`).
// Each file's default export is an async function that prints `bench NAME: VALUE UNIT (ratio R vs C)`.
//
// Every benchmark runs in a process of its own (this file with `--one NAME`, with --expose-gc so
// RSS figures start from a collected heap): one benchmark's leftovers — a 100,000-item result set
// on the heap, open handles, warmed caches — must not tax or help the next one's figures.
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = new URL('.', import.meta.url);

async function runOne(name: string): Promise<void> {
  const mod = (await import(pathToFileURL(new URL(`${name}.ts`, dir).pathname).href)) as {
    default?: () => Promise<void>;
  };
  if (typeof mod.default !== 'function') throw new Error('no default export function');
  await mod.default();
}

function runInChild(name: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--one', name], {
      stdio: 'inherit',
    });
    child.once('error', (error) => {
      console.error(`bench ${name} failed: ${error.message}`);
      resolve(false);
    });
    child.once('exit', (code, signal) => {
      if (code !== 0) console.error(`bench ${name} failed: exited with ${signal ?? code}`);
      resolve(code === 0);
    });
  });
}

if (process.argv[2] === '--one' && process.argv[3]) {
  const name = process.argv[3];
  try {
    await runOne(name);
    process.exit(0);
  } catch (error) {
    console.error(`bench ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  }
}

const wanted = process.argv.slice(2);
const all = (await readdir(dir))
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => basename(f, '.ts'))
  .sort();
const chosen =
  wanted.length === 0 ? all : all.filter((name) => wanted.some((w) => name === w || name.startsWith(`${w}-`)));

if (chosen.length === 0) {
  console.error(`No benchmark matches ${wanted.join(', ')}. Available: ${all.join(', ') || '(none)'}`);
  process.exit(2);
}

console.log(`Node ${process.version}; benchmarks: ${chosen.join(', ')}`);
let failed = 0;
for (const name of chosen) {
  console.log(`# ${name}`);
  if (!(await runInChild(name))) failed++;
}
process.exit(failed === 0 ? 0 : 1);
