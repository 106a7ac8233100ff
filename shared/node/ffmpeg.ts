import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createLineSplitter, parseProgressFraction, parseProgressSeconds } from './ffmpeg-progress.ts';

export { parseProgressFraction, parseProgressSeconds, createLineSplitter } from './ffmpeg-progress.ts';

/**
 * The one way the app and the service run ffmpeg and ffprobe: an argument array (never a shell),
 * every live process in a registry so quitting can kill them all, abort and timeout that kill the
 * process and wait for it to exit, and errors that carry the tail of stderr.
 *
 * Binaries: an explicit path wins, then `CLIPDESK_FFMPEG` / `CLIPDESK_FFPROBE`, then the npm
 * packages that carry static builds (@ffmpeg-installer/ffmpeg, @ffprobe-installer/ffprobe).
 */

const require = createRequire(import.meta.url);

export function ffmpegPath(override?: string): string {
  if (override) return override;
  const fromEnv = process.env['CLIPDESK_FFMPEG'];
  if (fromEnv) return fromEnv;
  return installerPath('@ffmpeg-installer/ffmpeg', 'ffmpeg');
}

export function ffprobePath(override?: string): string {
  if (override) return override;
  const fromEnv = process.env['CLIPDESK_FFPROBE'];
  if (fromEnv) return fromEnv;
  return installerPath('@ffprobe-installer/ffprobe', 'ffprobe');
}

function installerPath(pkg: string, name: string): string {
  try {
    const mod = require(pkg) as { path?: unknown };
    if (typeof mod.path === 'string' && mod.path.length > 0) return mod.path;
  } catch {
    // The installer throws when its platform package is missing; fall through to the PATH.
  }
  return name;
}

export interface RunFfmpegOptions {
  signal?: AbortSignal;
  /** Kill the process when it runs longer than this. */
  timeoutMs?: number;
  /** Called with a fraction in [0, 1] as output is written. */
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

export type FfmpegFailure = 'exit' | 'spawn' | 'timeout' | 'aborted';

export class FfmpegError extends Error {
  readonly failure: FfmpegFailure;
  readonly exitCode: number | null;
  /** The last lines ffmpeg wrote to stderr, which say what went wrong. */
  readonly stderrTail: string;
  constructor(message: string, failure: FfmpegFailure, exitCode: number | null, stderrTail: string) {
    super(stderrTail ? `${message}\n${stderrTail}` : message);
    this.name = failure === 'aborted' ? 'AbortError' : 'FfmpegError';
    this.failure = failure;
    this.exitCode = exitCode;
    this.stderrTail = stderrTail;
  }
}

const STDERR_KEEP = 256 * 1024;
const TAIL_LINES = 12;

interface LiveProcess {
  child: ChildProcess;
  exited: Promise<void>;
}

const live = new Set<LiveProcess>();

/** Processes started by this module that have not exited yet. */
export function liveProcessCount(): number {
  return live.size;
}

/** Kills every ffmpeg/ffprobe this module started and waits until they have exited (app quit). */
export async function killAll(): Promise<void> {
  const all = [...live];
  for (const p of all) p.child.kill('SIGKILL');
  await Promise.all(all.map((p) => p.exited));
}

interface SpawnedRun {
  stdout: Buffer[];
  stderr: string;
}

/**
 * Spawns `binary args`, collects output, and settles once the process has exited. Abort and
 * timeout kill the process with SIGKILL, then wait for its exit before rejecting, so a caller
 * that removes partial files afterwards never races a still-writing process.
 */
function runProcess(
  binary: string,
  args: string[],
  opts: {
    signal?: AbortSignal;
    timeoutMs?: number;
    cwd?: string;
    onStderrLine?: (line: string) => void;
    keepStdout: boolean;
  },
): Promise<SpawnedRun> {
  const label = binaryLabel(binary);
  if (opts.signal?.aborted) {
    return Promise.reject(new FfmpegError(`${label} was cancelled before it started`, 'aborted', null, ''));
  }
  return new Promise<SpawnedRun>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(binary, args, {
        cwd: opts.cwd,
        stdio: ['ignore', opts.keepStdout ? 'pipe' : 'ignore', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      reject(new FfmpegError(`${label} could not be started (${binary}): ${errorText(err)}`, 'spawn', null, ''));
      return;
    }

    let stderr = '';
    const stdout: Buffer[] = [];
    let stopReason: 'timeout' | 'aborted' | null = null;
    let spawnError: Error | null = null;
    let markExited: () => void = () => undefined;
    const entry: LiveProcess = { child, exited: new Promise<void>((r) => (markExited = r)) };
    live.add(entry);

    const splitter = createLineSplitter((line) => opts.onStderrLine?.(line));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > STDERR_KEEP * 2) stderr = stderr.slice(-STDERR_KEEP);
      splitter.push(chunk);
    });
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));

    const stop = (reason: 'timeout' | 'aborted') => {
      if (stopReason) return;
      stopReason = reason;
      child.kill('SIGKILL');
    };
    const onAbort = () => stop('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = opts.timeoutMs !== undefined ? setTimeout(() => stop('timeout'), opts.timeoutMs) : undefined;

    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('close', (code, killedBy) => {
      splitter.end();
      live.delete(entry);
      markExited();
      opts.signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
      if (stderr.length > STDERR_KEEP) stderr = stderr.slice(-STDERR_KEEP);
      const tail = stderrTail(stderr);
      if (stopReason === 'aborted') {
        reject(new FfmpegError(`${label} was cancelled`, 'aborted', code, tail));
      } else if (stopReason === 'timeout') {
        reject(new FfmpegError(`${label} timed out after ${opts.timeoutMs} ms`, 'timeout', code, tail));
      } else if (spawnError) {
        reject(new FfmpegError(`${label} could not be started (${binary}): ${spawnError.message}`, 'spawn', null, ''));
      } else if (code !== 0) {
        const how = killedBy ? `was killed by ${killedBy}` : `exited with code ${code}`;
        reject(new FfmpegError(`${label} ${how}`, 'exit', code, tail));
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

/**
 * Runs ffmpeg with `-nostdin -hide_banner` before the given arguments.
 * Resolves with stderr when ffmpeg exits 0; rejects with an `FfmpegError` otherwise.
 */
export async function runFfmpeg(args: string[], opts: RunFfmpegOptions = {}): Promise<RunResult> {
  let total = opts.totalSeconds ?? 0;
  let lastFraction = -1;
  const onProgress = opts.onProgress;
  const onStderrLine = onProgress
    ? (line: string) => {
        if (!(total > 0)) {
          const duration = /^\s*Duration:\s*(\d+:\d{2}:\d{2}(?:\.\d+)?)/.exec(line);
          if (duration?.[1] !== undefined) total = parseProgressSeconds(`time=${duration[1]}`) ?? 0;
          return;
        }
        const fraction = parseProgressFraction(line, total);
        if (fraction !== null && fraction > lastFraction) {
          lastFraction = fraction;
          onProgress(fraction);
        }
      }
    : undefined;
  const { stderr } = await runProcess(ffmpegPath(opts.ffmpegPath), ['-nostdin', '-hide_banner', ...args], {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    cwd: opts.cwd,
    onStderrLine,
    keepStdout: false,
  });
  if (onProgress && lastFraction < 1) onProgress(1);
  return { stderr };
}

export interface ProbeResult {
  /** Container duration in seconds (0 when unknown, e.g. a still image). */
  durationSeconds: number;
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
}

export interface ProbeOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
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
  }>;
}

/** Reads a media file's basic facts with ffprobe's JSON output. Rejects if ffprobe cannot read it. */
export async function probe(path: string, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const { stdout } = await runProcess(
    ffprobePath(opts.ffprobePath),
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '--', path],
    { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 60_000, keepStdout: true },
  );
  let raw: RawProbe;
  try {
    raw = JSON.parse(Buffer.concat(stdout).toString('utf8')) as RawProbe;
  } catch {
    throw new FfmpegError(`ffprobe returned unreadable output for ${path}`, 'exit', 0, '');
  }
  const video = raw.streams?.find((s) => s.codec_type === 'video');
  const duration = Number(raw.format?.duration ?? video?.duration ?? 0);
  const frames = video?.nb_frames !== undefined ? Number(video.nb_frames) : NaN;
  return {
    durationSeconds: Number.isFinite(duration) ? duration : 0,
    width: video?.width ?? 0,
    height: video?.height ?? 0,
    videoCodec: video?.codec_name ?? '',
    formatName: raw.format?.format_name ?? '',
    hasVideo: video !== undefined,
    frameCount: Number.isFinite(frames) ? frames : null,
    pixelFormat: video?.pix_fmt ?? '',
  };
}

function stderrTail(stderr: string): string {
  const lines = stderr.split(/\r\n|\r|\n/).filter((l) => l.trim().length > 0 && !/^\s*frame=/.test(l));
  return lines.slice(-TAIL_LINES).join('\n');
}

function binaryLabel(binary: string): string {
  return /ffprobe/i.test(binary) ? 'ffprobe' : 'ffmpeg';
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
