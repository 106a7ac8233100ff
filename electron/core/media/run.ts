import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import ffmpeg from 'fluent-ffmpeg';
import type { MediaBinaries } from './binaries.ts';
import { MediaToolError, classifyFfmpegFailure } from './errors.ts';
import { fileUrl, safeInputOptions } from './formats.ts';
import { initialProgress, reduceProgress } from './progress.ts';
import type { ProgressState } from './progress.ts';
import type { ProcessRegistry } from './registry.ts';

/** One ffmpeg invocation: everything but the safety options, which are always added here. */
export interface FfmpegSpec {
  op: string;
  /** Absolute, checked path. */
  input: string;
  /** Absolute path of the final file; ffmpeg writes a temporary sibling that is renamed on success. */
  output: string;
  inputOptions: string[];
  outputOptions: string[];
  complexFilter?: string;
  durationHint?: number | null;
  /**
   * Spawn ffmpeg here instead of through fluent-ffmpeg. For short hot paths (thumbnails): its
   * per-call preparation (capability checks through callback chains, argument assembly, line
   * parsing for codec data and progress) is a noticeable share of a 15 ms job.
   */
  direct?: boolean;
}

export interface RunContext {
  binaries: MediaBinaries;
  registry: ProcessRegistry;
  timeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: ProgressState) => void;
  now: () => number;
}

type KillReason = 'canceled' | 'timeout' | 'quit';
/** Binaries found executable once; a binary removed later still fails clearly, via spawn. */
const checkedBinaries = new Set<string>();
const STDERR_LINES_KEPT = 200;

/** The argument list ffmpeg gets (without the binary); exported for tests and the benchmark. */
export function ffmpegArgs(spec: FfmpegSpec, tmpOutput: string): string[] {
  return [
    '-hide_banner',
    ...safeInputOptions(),
    ...spec.inputOptions,
    '-i',
    fileUrl(spec.input),
    ...(spec.complexFilter ? ['-filter_complex', spec.complexFilter] : []),
    ...spec.outputOptions,
    '-y',
    tmpOutput,
  ];
}

export function temporaryOutputPath(output: string): string {
  const ext = extname(output);
  return join(dirname(output), `.${basename(output, ext)}.${randomUUID().slice(0, 8)}.partial${ext}`);
}

export async function runFfmpeg(spec: FfmpegSpec, ctx: RunContext): Promise<void> {
  const name = basename(spec.input);
  if (ctx.signal?.aborted) throw new MediaToolError('canceled', `${spec.op} of ${name} was canceled`);
  // fluent-ffmpeg throws from inside its exit handler when the binary cannot be spawned; check first.
  try {
    if (!checkedBinaries.has(ctx.binaries.ffmpegPath)) {
      await access(ctx.binaries.ffmpegPath, constants.X_OK);
      checkedBinaries.add(ctx.binaries.ffmpegPath);
    }
  } catch {
    throw new MediaToolError(
      'binary_missing',
      `${spec.op}: ffmpeg was not found (or is not executable) at ${ctx.binaries.ffmpegPath}`,
    );
  }
  const tmp = temporaryOutputPath(spec.output);

  let progress = initialProgress(spec.durationHint ?? null);
  const stderr: string[] = [];
  let killReason: KillReason | null = null;
  let proc: ChildProcess | undefined;
  let settle!: () => void;
  const exited = new Promise<void>((r) => (settle = r));

  const entry = ctx.registry.add({
    op: spec.op,
    startedAt: ctx.now(),
    pid: () => proc?.pid,
    kill(reason) {
      killReason ??= reason;
      proc?.kill('SIGKILL');
    },
    exited,
  });
  const onAbort = (): void => entry.kill('canceled');
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => entry.kill('timeout'), ctx.timeoutMs);

  const onStart = (child: ChildProcess | undefined): void => {
    proc = child;
    if (killReason) proc?.kill('SIGKILL');
  };
  const onStderrLine = (line: string): void => {
    stderr.push(line);
    if (stderr.length > STDERR_LINES_KEPT) stderr.shift();
    const next = reduceProgress(progress, line);
    if (next !== progress) {
      progress = next;
      if (next.latest) ctx.onProgress?.(next);
    }
  };
  const failure = await (spec.direct ? launchDirect : launchFluent)(
    spec,
    tmp,
    ctx.binaries.ffmpegPath,
    onStart,
    onStderrLine,
  );
  await waitForExit(proc);
  clearTimeout(timer);
  ctx.signal?.removeEventListener('abort', onAbort);
  ctx.registry.remove(entry);
  settle();

  if (failure || killReason) {
    await rm(tmp, { force: true });
    if (killReason === 'timeout')
      throw new MediaToolError(
        'timeout',
        `${spec.op} of ${name} took longer than ${Math.round(ctx.timeoutMs / 1000)} s and was stopped`,
      );
    if (killReason) throw new MediaToolError('canceled', `${spec.op} of ${name} was canceled`);
    if (failure && /ENOENT|Cannot find ffmpeg/.test(failure.message) && stderr.length === 0) {
      throw new MediaToolError('binary_missing', `${spec.op}: ffmpeg was not found at ${ctx.binaries.ffmpegPath}`);
    }
    throw classifyFfmpegFailure(spec.op, name, stderr.join('\n') || (failure?.message ?? ''));
  }
  const written = await stat(tmp).catch(() => null);
  if (!written || written.size === 0) {
    await rm(tmp, { force: true });
    throw new MediaToolError(
      'no_output',
      `${spec.op}: ffmpeg produced nothing from ${name} (the requested time may be past its end)`,
      stderr.slice(-4).join('\n'),
    );
  }
  await rename(tmp, spec.output);
}

async function waitForExit(proc: ChildProcess | undefined): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  await new Promise<void>((r) => proc.once('exit', () => r()));
}

type Launcher = (
  spec: FfmpegSpec,
  tmp: string,
  ffmpegPath: string,
  onStart: (child: ChildProcess | undefined) => void,
  onStderrLine: (line: string) => void,
) => Promise<Error | null>;

/** Runs the command through fluent-ffmpeg; resolves once the child has exited and its pipes closed. */
const launchFluent: Launcher = (spec, tmp, ffmpegPath, onStart, onStderrLine) => {
  const command = ffmpeg({ stdoutLines: STDERR_LINES_KEPT });
  command.setFfmpegPath(ffmpegPath);
  // Arrays with one element per argument: fluent-ffmpeg splits single strings on a space.
  command.input(fileUrl(spec.input)).inputOptions(['-hide_banner', ...safeInputOptions(), ...spec.inputOptions]);
  if (spec.complexFilter) command.complexFilter(spec.complexFilter);
  command.output(tmp).outputOptions(spec.outputOptions);
  command.on('start', () => onStart((command as unknown as { ffmpegProc?: ChildProcess }).ffmpegProc));
  command.on('stderr', onStderrLine);
  return new Promise((resolvePromise) => {
    command.on('end', () => resolvePromise(null));
    command.on('error', (err: Error) => resolvePromise(err));
    command.run();
  });
};

/** Spawns ffmpeg itself with the same arguments (an array, no shell); resolves after exit and pipe close. */
const launchDirect: Launcher = (spec, tmp, ffmpegPath, onStart, onStderrLine) =>
  new Promise((resolvePromise) => {
    const child = spawn(ffmpegPath, ffmpegArgs(spec, tmp), { stdio: ['ignore', 'ignore', 'pipe'], windowsHide: true });
    let done = false;
    const finish = (result: Error | null): void => {
      if (done) return;
      done = true;
      resolvePromise(result);
    };
    // A child that never started has no pid and emits no 'exit'; do not wait for one.
    child.once('error', (err) => {
      if (child.pid === undefined) onStart(undefined);
      finish(err);
    });
    onStart(child.pid === undefined ? undefined : child);
    let rest = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split(/\r\n|\r|\n/);
      rest = lines.pop() ?? '';
      for (const line of lines) if (line) onStderrLine(line);
    });
    child.once('close', (code, signal) => {
      if (rest) onStderrLine(rest);
      finish(code === 0 ? null : new Error(`ffmpeg exited with ${code ?? signal}`));
    });
  });
