// `npm test`: every vitest project and the end-to-end tests, side by side (docs/testing.md,
// "Running the two runners side by side"). Both spend much of their time waiting (on leases,
// renders at nice 19, a browser's page), so on two cores running them together fills those
// waits instead of adding the two durations. Vitest's report streams as it comes; Playwright's
// lines are prefixed with `e2e │`. The run fails if either fails, and ends with both times.
//
// CLIPDESK_TEST_SERIAL=1 runs them one after the other (vitest first), as before.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

interface Finished {
  name: string;
  code: number;
  seconds: number;
}

const started = Date.now();

function run(
  name: string,
  command: string,
  args: string[],
  options: { prefix?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Finished> {
  const begin = Date.now();
  const { prefix } = options;
  const child: ChildProcess = spawn(command, args, {
    stdio: prefix === undefined ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  if (prefix !== undefined) {
    for (const stream of [child.stdout, child.stderr])
      if (stream) createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`));
  }
  return new Promise((resolve) => {
    child.once('error', (error) => {
      console.error(`${name}: could not start ${command}: ${error.message}`);
      resolve({ name, code: 127, seconds: (Date.now() - begin) / 1000 });
    });
    child.once('close', (code, signal) =>
      resolve({ name, code: code ?? (signal ? 128 : 1), seconds: (Date.now() - begin) / 1000 }),
    );
  });
}

function report(results: Finished[]): number {
  console.log('\nnpm test:');
  for (const r of results) console.log(`  ${r.name.padEnd(12)} ${r.seconds.toFixed(0).padStart(5)} s  exit ${r.code}`);
  console.log(`  ${'wall clock'.padEnd(12)} ${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s`);
  return results.some((r) => r.code !== 0) ? 1 : 0;
}

async function main(): Promise<number> {
  // The end-to-end tests load the built renderer (dist/renderer); built once, before both start.
  const build = await run('build', 'vite', ['build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn']);
  if (build.code !== 0) return report([build]);
  const vitest = () => run('vitest', 'vitest', ['run']);
  if (process.env['CLIPDESK_TEST_SERIAL'] === '1') {
    const first = await vitest();
    return report([build, first, await run('end-to-end', 'playwright', ['test'])]);
  }
  // Beside vitest's busy workers, the apps' renders at the default nice 19 would get almost no CPU
  // and wait minutes for a second's work: theirs run at normal priority, as vitest's processes do.
  const e2e = run('end-to-end', 'playwright', ['test'], {
    prefix: 'e2e │ ',
    env: { CLIPDESK_RENDER_NICENESS: process.env['CLIPDESK_RENDER_NICENESS'] ?? '0' },
  });
  return report([build, ...(await Promise.all([vitest(), e2e]))]);
}

process.exitCode = await main();
