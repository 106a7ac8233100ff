import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/clipdesk-service.js', import.meta.url));

export interface ServedProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT/v1`, from the line `serve` prints once it listens. */
  url: string;
  /** Everything it has printed on stdout so far. */
  stdout: () => string;
}

/**
 * A standalone `clipdesk-service serve` in a process of its own, on a free port, resolved once it
 * listens; rejects with its stderr if it exits first. `env` replaces the environment (tests arm
 * hooks such as CLIPDESK_TEST_CRASH_AT through it); `node` runs the bin (default: the tests' own Node).
 */
export function serveProcess(
  dataDir: string,
  options: { args?: string[]; env?: NodeJS.ProcessEnv; node?: string } = {},
): Promise<ServedProcess> {
  return new Promise((done, fail) => {
    const child = spawn(
      options.node ?? process.execPath,
      [BIN, 'serve', '--port', '0', '--data', dataDir, ...(options.args ?? [])],
      {
        cwd: ROOT,
        env: options.env ?? process.env,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/m.exec(stdout);
      if (m) done({ child, url: m[1]!, stdout: () => stdout });
    });
    child.once('exit', (code) => fail(new Error(`serve exited ${code}: ${stderr}`)));
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `clipdesk-service ARGS` in a process of its own, run to its end, with what it printed. */
export function runServiceCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr })));
}

/** Resolves with the signal that ended `child` (null for a plain exit), at once if it already has. */
export function exited(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null
      ? r(child.signalCode)
      : child.once('exit', () => r(child.signalCode)),
  );
}
