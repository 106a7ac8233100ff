// Runs benchmarks: `npm run bench` runs every bench/*.ts; `npm run bench -- NAME` runs the one
// named NAME, or every benchmark in the group NAME (files named NAME-*.ts, e.g. `service`).
// Each file's default export is an async function that prints `bench NAME: VALUE UNIT (ratio R vs C)`.
import { readdir } from 'node:fs/promises';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = new URL('.', import.meta.url);
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
  try {
    const mod = (await import(pathToFileURL(new URL(`${name}.ts`, dir).pathname).href)) as {
      default?: () => Promise<void>;
    };
    if (typeof mod.default !== 'function') throw new Error('no default export function');
    await mod.default();
  } catch (error) {
    failed++;
    console.error(`bench ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
