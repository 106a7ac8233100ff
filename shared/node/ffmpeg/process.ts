import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants, writeFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { isAbsolute } from 'node:path';
import { toolEnv } from '../child-env.ts';
import { FfmpegError, stderrTail } from './errors.ts';
import { createLineSplitter } from './progress.ts';
import { processRegistry } from './registry.ts';
import type { KillReason, ProcessRegistry } from './registry.ts';
import { killTree, watchedCommand } from './watchdog.ts';

/** What every run of ffmpeg or ffprobe takes, however it is built. */
export interface RunControl {
  /** A word for messages and `running()`: 'probe', 'thumbnail', 'render' … */
  op?: string;
  signal?: AbortSignal;
  /** Kill the process when it runs longer than this. */
  timeoutMs?: number;
  /** Default: the process-wide registry. */
  registry?: ProcessRegistry;
  onStderrLine?: (line: string) => void;
  now?: () => number;
  /**
   * The process's nice value (0 normal, 19 lowest), set as it starts. Background work (the
   * service's renders and transcodes) runs at BACKGROUND_NICENESS so that the process it serves,
   * the app's main or the service's HTTP layer, keeps its share of the CPU (docs/architecture.md, "The Local engine's process").
   */
  niceness?: number;
}

/**
 * The nice value of background renders and transcodes: the lowest. Measured here (P12): with five
 * renders at nice 19, a small HTTP server beside them answered as fast as on an idle machine
 * (p50 0.80 ms against 0.81), where nice 10 still took a visible share from main.
 */
export const BACKGROUND_NICENESS = 19;

export interface ProcessOutput {
  stdout: Buffer;
  /** stderr (the last 256 KB when more was written). */
  stderr: string;
}

const STDERR_KEEP = 256 * 1024;
/** Binaries found executable once; one removed later still fails clearly, at spawn. */
const checked = new Set<string>();

/** Fails with a 'spawn' FfmpegError when an absolute binary path is not an executable file. */
export async function checkBinary(binary: string): Promise<void> {
  if (checked.has(binary) || !isAbsolute(binary)) return;
  try {
    await access(binary, constants.X_OK);
    checked.add(binary);
  } catch {
    throw new FfmpegError(`${labelOf(binary)} was not found (or is not executable) at ${binary}`, 'spawn', null, '');
  }
}

/**
 * Tracks one child from start to exit: registry entry, abort, timeout, stderr lines. `kill` stops
 * it with the given reason; the returned promise settles after the child has exited, so a caller
 * that removes partial files afterwards never races a still-writing process.
 */
export function superviseRun(
  control: RunControl,
  label: string,
  kill: () => void,
): {
  started(): void;
  stderrChunk(chunk: string): void;
  /** Call once the process has exited; returns why it was stopped, if it was, and the stderr kept. */
  finish(): { stopped: KillReason | null; stderr: string };
} {
  const registry = control.registry ?? processRegistry;
  let stopped: KillReason | null = null;
  let isStarted = false;
  let stderr = '';
  let markExited: () => void = () => undefined;
  const splitter = createLineSplitter((line) => control.onStderrLine?.(line));
  const entry = registry.add({
    op: control.op ?? label,
    startedAt: (control.now ?? Date.now)(),
    started: () => isStarted,
    kill(reason) {
      if (stopped) return;
      stopped = reason;
      if (isStarted) kill();
    },
    exited: new Promise<void>((r) => (markExited = r)),
  });
  const onAbort = (): void => entry.kill('canceled');
  control.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    control.timeoutMs === undefined ? undefined : setTimeout(() => entry.kill('timeout'), control.timeoutMs);
  return {
    started() {
      isStarted = true;
      if (stopped) kill();
    },
    stderrChunk(chunk) {
      stderr += chunk;
      if (stderr.length > STDERR_KEEP * 2) stderr = stderr.slice(-STDERR_KEEP);
      splitter.push(chunk);
    },
    finish() {
      splitter.end();
      if (timer) clearTimeout(timer);
      control.signal?.removeEventListener('abort', onAbort);
      registry.remove(entry);
      markExited();
      return { stopped, stderr: stderr.length > STDERR_KEEP ? stderr.slice(-STDERR_KEEP) : stderr };
    },
  };
}

/** The error for a run that was stopped or failed, or null when it succeeded. */
export function runFailure(
  label: string,
  control: RunControl,
  outcome: { stopped: KillReason | null; stderr: string; code: number | null; signal: string | null },
): FfmpegError | null {
  const tail = stderrTail(outcome.stderr);
  if (outcome.stopped === 'timeout')
    return new FfmpegError(`${label} timed out after ${control.timeoutMs} ms`, 'timeout', outcome.code, tail);
  if (outcome.stopped) return new FfmpegError(`${label} was cancelled`, 'aborted', outcome.code, tail);
  if (outcome.code === 0) return null;
  // The watchdog's shell answers 127/126 when it cannot run the binary (found on the PATH or not).
  if ((outcome.code === 127 || outcome.code === 126) && /not found|Permission denied|cannot execute/i.test(tail))
    return new FfmpegError(`${label} could not be started: ${tail}`, 'spawn', null, '');
  const how = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.code}`;
  return new FfmpegError(`${label} ${how}`, 'exit', outcome.code, tail);
}

/**
 * A detached run starts a session of its own, and Linux's autogroup scheduling (on by default)
 * makes each session a group whose share of the CPU ignores its processes' nice values: measured
 * (P12), five renders at nice 19 each took a full group's share against main, whose code then ran
 * 2× slower beside them. The group's own nice is set as well (/proc/PID/autogroup, Linux only;
 * without autogroup or where it is not permitted, the process's nice alone applies).
 */
function lowerAutogroup(pid: number, niceness: number): void {
  if (process.platform !== 'linux') return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(niceness));
  } catch {
    // No autogroup in this kernel, or the process is already gone.
  }
}

/**
 * Spawns `binary args` (an argument array, never a shell line) under the watchdog, collects its
 * output and settles once it has exited. Rejects with an FfmpegError on failure, stop or timeout.
 */
export async function runProcess(
  binary: string,
  args: string[],
  control: RunControl & { keepStdout?: boolean; cwd?: string },
): Promise<ProcessOutput> {
  const label = labelOf(binary);
  if (control.signal?.aborted) throw new FfmpegError(`${label} was cancelled before it started`, 'aborted', null, '');
  await checkBinary(binary);
  const watched = watchedCommand(binary, args);
  let child: ChildProcess;
  try {
    child = spawn(watched.command, watched.args, {
      cwd: control.cwd,
      stdio: [
        'ignore',
        control.keepStdout ? 'pipe' : 'ignore',
        'pipe',
        ...(watched.reaperPipe ? [watched.reaperPipe] : []),
      ],
      detached: watched.detached,
      windowsHide: true,
      // Explicit: the parent's keys and passphrase stay in the parent (shared/node/child-env.ts).
      env: toolEnv(),
    });
  } catch (err) {
    throw new FfmpegError(`${label} could not be started (${binary}): ${errorText(err)}`, 'spawn', null, '');
  }
  if (control.niceness !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, control.niceness);
    } catch {
      // Not permitted here (or already gone): it runs at the normal priority.
    }
    if (watched.detached) lowerAutogroup(child.pid, control.niceness);
  }
  const run = superviseRun(control, label, () => killTree(child, watched.detached));
  if (child.pid !== undefined) run.started();
  const stdout: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => run.stderrChunk(chunk));
  const { code, signal, spawnError } = await new Promise<{
    code: number | null;
    signal: string | null;
    spawnError: Error | null;
  }>((resolve) => {
    let spawnError: Error | null = null;
    child.once('error', (err) => {
      spawnError = err;
      // A child that never started emits no 'close'.
      if (child.pid === undefined) resolve({ code: null, signal: null, spawnError: err });
    });
    child.once('close', (c, s) => resolve({ code: c, signal: s, spawnError }));
  });
  if (child.pid !== undefined) watched.withdraw(child.pid);
  const { stopped, stderr } = run.finish();
  if (spawnError && !stopped)
    throw new FfmpegError(`${label} could not be started (${binary}): ${errorText(spawnError)}`, 'spawn', null, '');
  const failure = runFailure(label, control, { stopped, stderr, code, signal });
  if (failure) throw failure;
  return { stdout: Buffer.concat(stdout), stderr };
}

function labelOf(binary: string): string {
  return /ffprobe/i.test(binary) ? 'ffprobe' : 'ffmpeg';
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
