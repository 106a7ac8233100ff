import type { Clock } from '../../../shared/clock.ts';
import { systemClock } from '../../../shared/clock.ts';
import { createProcessRegistry, resolveMediaBinaries } from '../../../shared/node/ffmpeg.ts';
import type { MediaBinaries, ProgressState } from '../../../shared/node/ffmpeg.ts';
import { MediaToolError } from './errors.ts';
import { checkInput, checkOutput } from './input.ts';
import {
  contactSheetArgs,
  exportGifArgs,
  exportMp4Args,
  exportWebmArgs,
  frameAtArgs,
  lastFrameArgs,
  previewProxyArgs,
  thumbnailArgs,
  trimArgs,
} from './operations.ts';
import type {
  ContactSheetOptions,
  GifOptions,
  Mp4Options,
  OperationArgs,
  PreviewOptions,
  ThumbnailOptions,
  TrimOptions,
  WebmOptions,
} from './operations.ts';
import { runProbe } from './probe.ts';
import { MAX_SEQUENCE_CLIPS, sequenceArgs } from './sequence.ts';
import type { SequenceClip, SequenceOptions } from './sequence.ts';
import type { MediaInfo } from './probe.ts';
import { runFfmpeg } from './run.ts';
import type { FfmpegSpec } from './run.ts';

export interface MediaToolsOptions {
  /** Overrides for the bundled binaries (a user may point the app at another ffmpeg). */
  binaries?: Partial<MediaBinaries>;
  /** Default time limit of one operation; each call may pass its own. */
  timeoutMs?: number;
  probeTimeoutMs?: number;
  clock?: Clock;
}

export interface OperationOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  onProgress?: (progress: ProgressState) => void;
}

export interface OperationResult {
  output: string;
}

export interface RunningMediaProcess {
  id: number;
  op: string;
  /** False until the child has been spawned (fluent-ffmpeg spawns a few ticks after the call). */
  started: boolean;
  startedAt: number;
}

export interface MediaTools {
  readonly binaries: MediaBinaries;
  probe(input: string, opts?: Pick<OperationOptions, 'signal' | 'timeoutMs'>): Promise<MediaInfo>;
  thumbnail(input: string, output: string, opts?: ThumbnailOptions & OperationOptions): Promise<OperationResult>;
  previewProxy(input: string, output: string, opts?: PreviewOptions & OperationOptions): Promise<OperationResult>;
  exportMp4(input: string, output: string, opts?: Mp4Options & OperationOptions): Promise<OperationResult>;
  exportWebm(input: string, output: string, opts?: WebmOptions & OperationOptions): Promise<OperationResult>;
  exportGif(input: string, output: string, opts?: GifOptions & OperationOptions): Promise<OperationResult>;
  frameAt(input: string, output: string, atSeconds: number, opts?: OperationOptions): Promise<OperationResult>;
  lastFrame(input: string, output: string, opts?: OperationOptions): Promise<OperationResult>;
  contactSheet(input: string, output: string, opts: ContactSheetOptions & OperationOptions): Promise<OperationResult>;
  trim(input: string, output: string, opts: TrimOptions & OperationOptions): Promise<OperationResult>;
  /**
   * Shots back to back in one MP4 (a shot chain's preview or export): sizes and frame rates are
   * normalised, and sound is kept, with silence for the shots that have none.
   */
  sequence(inputs: string[], output: string, opts?: SequenceOptions & OperationOptions): Promise<OperationResult>;
  /** The ffmpeg/ffprobe children alive right now. */
  running(): RunningMediaProcess[];
  /** Kills every running child and waits until they have exited. */
  cancelAll(): Promise<void>;
  /** Quit: kills everything and refuses new work. */
  dispose(): Promise<void>;
}

/**
 * The app's media operations. Commands are built here (fluent-ffmpeg for preview, transcode and
 * export); they run through the one runner in shared/node/ffmpeg, in this instance's registry.
 */
export function createMediaTools(options: MediaToolsOptions = {}): MediaTools {
  const binaries = resolveMediaBinaries(options.binaries);
  const registry = createProcessRegistry();
  const clock = options.clock ?? systemClock;
  const defaultTimeout = options.timeoutMs ?? 10 * 60_000;
  const probeTimeout = options.probeTimeoutMs ?? 30_000;
  let disposed = false;

  const assertOpen = (op: string): void => {
    if (disposed) throw new MediaToolError('canceled', `${op}: media tools are shut down`);
  };

  async function probe(input: string, opts: Pick<OperationOptions, 'signal' | 'timeoutMs'> = {}): Promise<MediaInfo> {
    assertOpen('probe');
    const path = await checkInput('probe', input);
    return runProbe(path, {
      ffprobePath: binaries.ffprobePath,
      registry,
      timeoutMs: opts.timeoutMs ?? probeTimeout,
      signal: opts.signal,
      now: () => clock.now(),
    });
  }

  async function run(
    op: string,
    input: string,
    output: string,
    args: OperationArgs & Pick<FfmpegSpec, 'direct' | 'moreInputs'>,
    opts: OperationOptions,
    durationHint: number | null = null,
  ): Promise<OperationResult> {
    assertOpen(op);
    const inPath = await checkInput(op, input);
    const outPath = checkOutput(op, output);
    const moreInputs = await Promise.all((args.moreInputs ?? []).map((i) => checkInput(op, i)));
    if (inPath === outPath || moreInputs.includes(outPath))
      throw new MediaToolError('invalid_argument', `${op}: the output must not overwrite the input`);
    await runFfmpeg(
      { op, input: inPath, output: outPath, ...args, moreInputs, durationHint },
      {
        binaries,
        registry,
        timeoutMs: opts.timeoutMs ?? defaultTimeout,
        signal: opts.signal,
        onProgress: opts.onProgress,
        now: () => clock.now(),
      },
    );
    return { output: outPath };
  }

  return {
    binaries,
    probe,
    // Direct spawn: thumbnails are many and short, so fluent-ffmpeg's per-call overhead shows.
    thumbnail: (input, output, opts = {}) =>
      run('thumbnail', input, output, { ...thumbnailArgs(opts), direct: true }, { timeoutMs: 60_000, ...opts }),
    previewProxy: (input, output, opts = {}) => run('preview', input, output, previewProxyArgs(opts), opts),
    exportMp4: (input, output, opts = {}) => run('export MP4', input, output, exportMp4Args(opts), opts),
    exportWebm: (input, output, opts = {}) => run('export WebM', input, output, exportWebmArgs(opts), opts),
    exportGif: (input, output, opts = {}) => run('export GIF', input, output, exportGifArgs(opts), opts),
    frameAt: (input, output, atSeconds, opts = {}) => run('frame export', input, output, frameAtArgs(atSeconds), opts),
    lastFrame: (input, output, opts = {}) => run('last frame', input, output, lastFrameArgs(), opts),
    async contactSheet(input, output, opts) {
      const info = await probe(input, opts);
      if (info.durationSeconds === null)
        throw new MediaToolError('invalid_argument', 'contact sheet: the input is a still image, not a video');
      return run(
        'contact sheet',
        input,
        output,
        contactSheetArgs(info.durationSeconds, opts),
        opts,
        info.durationSeconds,
      );
    },
    trim: (input, output, opts) => run('trim', input, output, trimArgs(opts), opts, opts.end - opts.start),
    async sequence(inputs, output, opts = {}) {
      if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > MAX_SEQUENCE_CLIPS)
        throw new MediaToolError('invalid_argument', `sequence: give 1 to ${MAX_SEQUENCE_CLIPS} clips`);
      // Probed first (one at a time: a chain can be long), so a bad shot is named in the error,
      // and for each one's length and sound.
      const clips: SequenceClip[] = [];
      for (const [i, input] of inputs.entries()) {
        const info = await probe(input, { signal: opts.signal });
        if (info.isImage || info.durationSeconds === null)
          throw new MediaToolError('invalid_argument', `sequence: clip ${i + 1} is a still image, not a video`);
        clips.push({
          durationSeconds: info.durationSeconds,
          width: info.video?.width ?? 0,
          height: info.video?.height ?? 0,
          fps: info.video?.fps ?? null,
          hasAudio: info.audio !== null,
        });
      }
      const total = clips.reduce((sum, c) => sum + c.durationSeconds, 0);
      const [first, ...rest] = inputs as [string, ...string[]];
      return run('sequence', first, output, { ...sequenceArgs(clips, opts), moreInputs: rest }, opts, total);
    },
    running: () => registry.list().map((p) => ({ id: p.id, op: p.op, started: p.started(), startedAt: p.startedAt })),
    cancelAll: () => registry.killAll('canceled'),
    async dispose() {
      disposed = true;
      await registry.killAll('quit');
    },
  };
}
