import { randomUUID } from 'node:crypto';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import ffmpeg from 'fluent-ffmpeg';
import { FfmpegError, initialProgress, reduceProgress, runFluent, runProcess } from '../../../shared/node/ffmpeg.ts';
import type { MediaBinaries, ProcessRegistry, ProgressState, RunControl } from '../../../shared/node/ffmpeg.ts';
import { MediaToolError, fromFfmpegError } from './errors.ts';
import { fileUrl, safeInputOptions } from './formats.ts';

/** One ffmpeg invocation: everything but the safety options, which are always added here. */
export interface FfmpegSpec {
  op: string;
  /** Absolute, checked path. */
  input: string;
  /** Further inputs (absolute, checked), after `input`, with the same safety options and no others. */
  moreInputs?: string[];
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

const STDERR_LINES_KEPT = 200;

/** The argument list ffmpeg gets (without the binary); exported for tests and the benchmark. */
export function ffmpegArgs(spec: FfmpegSpec, tmpOutput: string): string[] {
  return [
    '-nostdin',
    '-hide_banner',
    ...safeInputOptions(),
    ...spec.inputOptions,
    '-i',
    fileUrl(spec.input),
    ...(spec.moreInputs ?? []).flatMap((path) => [...safeInputOptions(), '-i', fileUrl(path)]),
    ...(spec.complexFilter ? ['-filter_complex', spec.complexFilter] : []),
    ...spec.outputOptions,
    '-y',
    tmpOutput,
  ];
}

function temporaryOutputPath(output: string): string {
  const ext = extname(output);
  return join(dirname(output), `.${basename(output, ext)}.${randomUUID().slice(0, 8)}.partial${ext}`);
}

/** The same command, built with fluent-ffmpeg (arrays with one element per argument: it splits strings on spaces). */
function fluentCommand(spec: FfmpegSpec, tmp: string): ffmpeg.FfmpegCommand {
  const command = ffmpeg({ stdoutLines: STDERR_LINES_KEPT });
  command
    .input(fileUrl(spec.input))
    .inputOptions(['-nostdin', '-hide_banner', ...safeInputOptions(), ...spec.inputOptions]);
  for (const path of spec.moreInputs ?? []) command.input(fileUrl(path)).inputOptions(safeInputOptions());
  if (spec.complexFilter) command.complexFilter(spec.complexFilter);
  command.output(tmp).outputOptions(spec.outputOptions);
  return command;
}

export async function runFfmpeg(spec: FfmpegSpec, ctx: RunContext): Promise<void> {
  const name = basename(spec.input);
  const tmp = temporaryOutputPath(spec.output);
  let progress = initialProgress(spec.durationHint ?? null);
  const stderr: string[] = [];
  const control: RunControl = {
    op: spec.op,
    registry: ctx.registry,
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
    now: ctx.now,
    onStderrLine(line) {
      stderr.push(line);
      if (stderr.length > STDERR_LINES_KEPT) stderr.shift();
      const next = reduceProgress(progress, line);
      if (next !== progress) {
        progress = next;
        if (next.latest) ctx.onProgress?.(next);
      }
    },
  };
  try {
    if (spec.direct) await runProcess(ctx.binaries.ffmpegPath, ffmpegArgs(spec, tmp), control);
    else await runFluent(fluentCommand(spec, tmp), ctx.binaries.ffmpegPath, control);
  } catch (error) {
    await rm(tmp, { force: true });
    if (!(error instanceof FfmpegError)) throw error;
    // Classify on everything ffmpeg said, not only the tail: the cause can come before the summary.
    const detailed = new FfmpegError(
      error.message,
      error.failure,
      error.exitCode,
      stderr.join('\n') || error.stderrTail,
    );
    throw fromFfmpegError(spec.op, name, detailed, ctx.timeoutMs);
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
