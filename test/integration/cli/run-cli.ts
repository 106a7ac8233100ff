import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../../bin/clipdesk.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The `clipdesk` command as a user runs it: a child process with HOME in `home` and no session
 * bus (so the keychain is 'none', as on a fresh headless machine). Async, so that a service in
 * the test's process can answer while the CLI runs.
 */
export function runCli(
  home: string,
  args: string[],
  env: Record<string, string> = {},
  input = '',
  /** Sees stderr as it comes, for a test that acts while the CLI waits (all of it so far). */
  onStderr?: (stderr: string) => void,
): Promise<CliRun> {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOME: home, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
  child.stderr.setEncoding('utf8').on('data', (t: string) => {
    stderr += t;
    onStderr?.(stderr);
  });
  child.stdin.on('error', () => {}); // the CLI may exit before reading stdin
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}
