import { ffmpegPath, ffprobePath } from './ffmpeg/binaries.ts';
import { FfmpegError } from './ffmpeg/errors.ts';
import { runProcess } from './ffmpeg/process.ts';
import type { RunControl } from './ffmpeg/process.ts';
import { initialProgress, reduceProgress } from './ffmpeg/progress.ts';
import { processRegistry } from './ffmpeg/registry.ts';

/**
 * The one way the app and the service run ffmpeg and ffprobe (the parts live in ./ffmpeg/):
 * binary resolution, a registry of every live process (killed and awaited on quit), abort and
 * timeout that kill the process and wait for it to exit, progress parsing, errors that carry the
 * tail of stderr, and a watchdog that kills ffmpeg when its parent dies. Commands are argument
 * arrays, never a shell line; fluent-ffmpeg commands run through `runFluent`.
 */
export {
  chooseMediaBinaries,
  ffmpegPath,
  ffprobePath,
  packagedMediaBinaries,
  pathPair,
  resolveMediaBinaries,
  useBundledMediaBinaries,
  versionIn,
} from './ffmpeg/binaries.ts';
export type { BinarySource, ChosenBinaries, MediaBinaries, PathPair } from './ffmpeg/binaries.ts';
export { FfmpegError, stderrTail } from './ffmpeg/errors.ts';
export type { FfmpegFailure } from './ffmpeg/errors.ts';
export { runFluent } from './ffmpeg/fluent.ts';
export { BACKGROUND_NICENESS, checkBinary, runProcess } from './ffmpeg/process.ts';
export type { ProcessOutput, RunControl } from './ffmpeg/process.ts';
export {
  createLineSplitter,
  initialProgress,
  parseDurationLine,
  parseProgressLine,
  parseTimestamp,
  reduceProgress,
} from './ffmpeg/progress.ts';
export type { ProgressSample, ProgressState } from './ffmpeg/progress.ts';
export { createProcessRegistry, processRegistry } from './ffmpeg/registry.ts';
export type { KillReason, ProcessRegistry, RegisteredProcess } from './ffmpeg/registry.ts';

export interface RunFfmpegOptions extends Omit<RunControl, 'onStderrLine'> {
  /** Called with a fraction in [0, 1] as output is written, and 1 at the end. */
  onProgress?: (fraction: number) => void;
  /**
   * Expected output length in seconds, for `onProgress`. Without it the first input's
   * `Duration:` line is used (lavfi sources have none, so pass it for generated video).
   */
  totalSeconds?: number;
  cwd?: string;
  /** Overrides the binary for this call (same rules as `ffmpegPath`). */
  ffmpegPath?: string;
}

export interface RunResult {
  /** ffmpeg's stderr (the last 256 KB when it wrote more). */
  stderr: string;
}

/** Processes in the process-wide registry that have not exited yet. */
export function liveProcessCount(): number {
  return processRegistry.list().length;
}

/** Kills every ffmpeg/ffprobe of the process-wide registry and waits until they have exited. */
export function killAll(): Promise<void> {
  return processRegistry.killAll('quit');
}

/**
 * Runs ffmpeg with `-nostdin -hide_banner` before the given arguments.
 * Resolves with stderr when ffmpeg exits 0; rejects with an `FfmpegError` otherwise.
 */
export async function runFfmpeg(args: string[], opts: RunFfmpegOptions = {}): Promise<RunResult> {
  const { onProgress, totalSeconds, ffmpegPath: override, ...control } = opts;
  let progress = initialProgress(totalSeconds ?? null);
  let lastFraction = -1;
  const onStderrLine = onProgress
    ? (line: string) => {
        progress = reduceProgress(progress, line);
        if (progress.fraction !== null && progress.fraction > lastFraction) {
          lastFraction = progress.fraction;
          onProgress(progress.fraction);
        }
      }
    : undefined;
  const { stderr } = await runProcess(ffmpegPath(override), ['-nostdin', '-hide_banner', ...args], {
    ...control,
    onStderrLine,
  });
  if (onProgress && lastFraction < 1) onProgress(1);
  return { stderr };
}

/**
 * What `binary -version` prints (ffmpeg and ffprobe both answer it), through the one runner, so the
 * check is supervised, bounded and killed on quit like every other run. Rejects with an FfmpegError
 * when the binary cannot run or fails.
 */
export async function versionText(binary: string, timeoutMs = 10_000): Promise<string> {
  const { stdout } = await runProcess(binary, ['-version'], { op: 'version', timeoutMs, keepStdout: true });
  return stdout.toString('utf8');
}

export interface ProbeResult {
  /** Container duration in seconds (0 when unknown, e.g. a still image). */
  durationSeconds: number;
  /**
   * The first video stream's own duration, where the container states one (MP4 does, WebM does
   * not), else the container's. Longer sound makes the container outlast the picture.
   */
  videoDurationSeconds: number;
  width: number;
  height: number;
  /** Codec of the first video stream (`h264`, `vp9`, `png`, `mjpeg`…), or '' without one. */
  videoCodec: string;
  /** ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `png_pipe`. */
  formatName: string;
  hasVideo: boolean;
  /** Frames of the first video stream when the container says (not every format does). */
  frameCount: number | null;
  pixelFormat: string;
  /** Whether the file has an audio stream (generated clips may carry a soundtrack). */
  hasAudio: boolean;
  /** Codec of the first audio stream (`aac`, `opus`, `mp3`…), or '' without one. */
  audioCodec: string;
  /** Bits per second of the first audio stream, when the container says (MP4 does). */
  audioBitRate: number | null;
}

export interface ProbeOptions extends Omit<RunControl, 'onStderrLine'> {
  ffprobePath?: string;
}

interface RawProbe {
  format?: { duration?: string; format_name?: string };
  streams?: Array<{
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    duration?: string;
    nb_frames?: string;
    pix_fmt?: string;
    bit_rate?: string;
  }>;
}

/** Reads a media file's basic facts with ffprobe's JSON output. Rejects if ffprobe cannot read it. */
export async function probe(path: string, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const { ffprobePath: override, ...control } = opts;
  const { stdout } = await runProcess(
    ffprobePath(override),
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '--', path],
    { op: 'probe', timeoutMs: 60_000, ...control, keepStdout: true },
  );
  let raw: RawProbe;
  try {
    raw = JSON.parse(stdout.toString('utf8')) as RawProbe;
  } catch {
    throw new FfmpegError(`ffprobe returned unreadable output for ${path}`, 'exit', 0, '');
  }
  const video = raw.streams?.find((s) => s.codec_type === 'video');
  const audio = raw.streams?.find((s) => s.codec_type === 'audio');
  const duration = Number(raw.format?.duration ?? video?.duration ?? 0);
  const videoDuration = Number(video?.duration ?? NaN);
  const frames = video?.nb_frames !== undefined ? Number(video.nb_frames) : NaN;
  return {
    durationSeconds: Number.isFinite(duration) ? duration : 0,
    videoDurationSeconds: Number.isFinite(videoDuration) ? videoDuration : Number.isFinite(duration) ? duration : 0,
    width: video?.width ?? 0,
    height: video?.height ?? 0,
    videoCodec: video?.codec_name ?? '',
    formatName: raw.format?.format_name ?? '',
    hasVideo: video !== undefined,
    frameCount: Number.isFinite(frames) ? frames : null,
    pixelFormat: video?.pix_fmt ?? '',
    hasAudio: audio !== undefined,
    audioCodec: audio?.codec_name ?? '',
    audioBitRate: audio?.bit_rate !== undefined && Number(audio.bit_rate) > 0 ? Number(audio.bit_rate) : null,
  };
}
