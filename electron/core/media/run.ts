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
    throw new MediaToolError('binary_missing', `${spec.op}: ffmpeg was not found (or is not executable) at ${ctx.binaries.ffmpegPath}`);
  }
  const tmp = temporaryOutputPath(spec.output);

  const command = ffmpeg({ stdoutLines: STDERR_LINES_KEPT });
  command.setFfmpegPath(ctx.binaries.ffmpegPath);
  // Arrays with one element per argument: fluent-ffmpeg splits single strings on a space.
  command.input(fileUrl(spec.input)).inputOptions(['-hide_banner', ...safeInputOptions(), ...spec.inputOptions]);
  if (spec.complexFilter) command.complexFilter(spec.complexFilter);
  command.output(tmp).outputOptions(spec.outputOptions);

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

  command.on('start', () => {
    proc = (command as unknown as { ffmpegProc?: ChildProcess }).ffmpegProc;
    if (killReason) proc?.kill('SIGKILL');
  });
  command.on('stderr', (line: string) => {
    stderr.push(line);
    if (stderr.length > STDERR_LINES_KEPT) stderr.shift();
    const next = reduceProgress(progress, line);
    if (next !== progress) {
      progress = next;
      if (next.latest) ctx.onProgress?.(next);
    }
  });

  // fluent-ffmpeg emits 'end'/'error' only after the child has exited and its pipes closed.
  const failure = await new Promise<Error | null>((resolvePromise) => {
    command.on('end', () => resolvePromise(null));
    command.on('error', (err: Error) => resolvePromise(err));
    command.run();
  });
  await waitForExit(proc);
  clearTimeout(timer);
  ctx.signal?.removeEventListener('abort', onAbort);
  ctx.registry.remove(entry);
  settle();

  if (failure || killReason) {
    await rm(tmp, { force: true });
    if (killReason === 'timeout') throw new MediaToolError('timeout', `${spec.op} of ${name} took longer than ${Math.round(ctx.timeoutMs / 1000)} s and was stopped`);
    if (killReason) throw new MediaToolError('canceled', `${spec.op} of ${name} was canceled`);
    if (failure && /ENOENT|Cannot find ffmpeg/.test(failure.message) && stderr.length === 0) {
      throw new MediaToolError('binary_missing', `${spec.op}: ffmpeg was not found at ${ctx.binaries.ffmpegPath}`);
    }
    throw classifyFfmpegFailure(spec.op, name, stderr.join('\n') || (failure?.message ?? ''));
  }
  const written = await stat(tmp).catch(() => null);
  if (!written || written.size === 0) {
    await rm(tmp, { force: true });
    throw new MediaToolError('no_output', `${spec.op}: ffmpeg produced nothing from ${name} (the requested time may be past its end)`, stderr.slice(-4).join('\n'));
  }
  await rename(tmp, spec.output);
}

async function waitForExit(proc: ChildProcess | undefined): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  await new Promise<void>((r) => proc.once('exit', () => r()));
}
