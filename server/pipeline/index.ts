import { copyFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKGROUND_NICENESS, FfmpegError, probe, runFfmpeg } from '../../shared/node/ffmpeg.ts';
import type { ProbeResult } from '../../shared/node/ffmpeg.ts';
import type { PipelineFile, PipelineResult } from './types.ts';

export type * from './types.ts';

/**
 * Turns a provider's master file into the stored files, in the spec's order after generation:
 * transcode (MP4/H.264 with faststart, WebM/VP9; the master's sound, if any, as AAC and Opus) →
 * thumbnail; then the caller stores them.
 * Every file is written under a temporary name and renamed when complete; on failure or abort
 * the files of this run are removed and the master is left alone.
 */
export interface PipelineInput {
  kind: 'video' | 'image';
  /** The provider's master: an MP4 for video, a PNG for an image. */
  master: string;
  workDir: string;
  signal: AbortSignal;
  ffmpegPath?: string;
  ffprobePath?: string;
  /** Thumbnail width in pixels (height follows the aspect ratio). Default 480. */
  thumbnailWidth?: number;
  /** What ffprobe already read of the master (a remote output is probed when it is checked): not probed again. */
  probed?: ProbeResult;
}

export class PipelineError extends Error {
  readonly aborted: boolean;
  constructor(message: string, aborted: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = aborted ? 'AbortError' : 'PipelineError';
    this.aborted = aborted;
  }
}

const STEP_TIMEOUT_MS = 10 * 60_000;

/** File names inside workDir; fixed so the caller knows what to move into storage. */
export const OUTPUT_NAMES = {
  mp4: 'video.mp4',
  webm: 'video.webm',
  png: 'image.png',
  webp: 'image.webp',
  thumbnail: 'thumbnail.jpg',
} as const;

export async function runPipeline(input: PipelineInput): Promise<PipelineResult> {
  const written: string[] = [];
  // Steps run side by side; when one fails, this stops the others before the cleanup.
  const steps = new AbortController();
  const stopSteps = () => steps.abort();
  input.signal.addEventListener('abort', stopSteps, { once: true });
  const run: Run = (args, out, totalSeconds) => {
    const partial = `${out}.partial`;
    written.push(partial, out);
    return runFfmpeg([...args, '-y', partial], {
      op: 'transcode',
      signal: steps.signal,
      niceness: BACKGROUND_NICENESS,
      timeoutMs: STEP_TIMEOUT_MS,
      totalSeconds,
      ffmpegPath: input.ffmpegPath,
    }).then(
      () => rename(partial, out),
      (err: unknown) => {
        steps.abort();
        throw err;
      },
    );
  };
  try {
    if (input.signal.aborted) throw new PipelineError('pipeline cancelled before it started', true);
    const info = input.probed ?? (await probe(input.master, { signal: input.signal, ffprobePath: input.ffprobePath }));
    if (!info.hasVideo || info.width <= 0 || info.height <= 0) {
      throw new PipelineError(`master ${input.master} has no picture`, false);
    }
    return input.kind === 'video'
      ? await videoPipeline(input, info, run)
      : await imagePipeline(input, info, run, written);
  } catch (err) {
    steps.abort();
    await Promise.all(written.map((p) => rm(p, { force: true })));
    if (err instanceof PipelineError) throw err;
    const aborted = input.signal.aborted || (err instanceof FfmpegError && err.failure === 'aborted');
    const message = err instanceof Error ? err.message : String(err);
    throw new PipelineError(aborted ? 'pipeline cancelled' : `pipeline failed: ${message}`, aborted, { cause: err });
  } finally {
    input.signal.removeEventListener('abort', stopSteps);
  }
}

/** Like Promise.all, but waits until every step has settled (so no process is still writing). */
async function allSettledOrThrow(steps: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(steps);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

type Run = (args: string[], out: string, totalSeconds?: number) => Promise<void>;

async function videoPipeline(input: PipelineInput, info: ProbeResult, run: Run): Promise<PipelineResult> {
  const mp4 = join(input.workDir, OUTPUT_NAMES.mp4);
  const webm = join(input.workDir, OUTPUT_NAMES.webm);
  const thumb = join(input.workDir, OUTPUT_NAMES.thumbnail);
  // The clip is as long as its picture: sound that runs on past the last frame is cut there
  // (else the record's duration and the file would outlast what was generated).
  const duration = info.videoDurationSeconds > 0 ? info.videoDurationSeconds : info.durationSeconds;
  const cut = info.hasAudio && info.durationSeconds > duration + 0.001 ? ['-t', duration.toFixed(6)] : [];
  // A master that already is H.264 4:2:0 is remuxed (exact frames, no generation loss);
  // anything else is encoded.
  const remux = info.videoCodec === 'h264' && info.pixelFormat === 'yuv420p';
  const mp4Codec = remux
    ? ['-c:v', 'copy']
    : ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-threads', '2'];
  const streams = [...streamMap(info), ...cut];
  const thumbWidth = input.thumbnailWidth ?? 480;
  const seek = Math.max(0, Math.min(duration / 2, duration - 0.1));

  // The VP9 encode is the long step; the remux and the thumbnail run beside it.
  await allSettledOrThrow([
    run(
      [
        '-i',
        input.master,
        ...streams,
        '-c:v',
        'libvpx-vp9',
        '-deadline',
        'realtime',
        '-cpu-used',
        '8',
        '-row-mt',
        '1',
        '-tile-columns',
        '2',
        '-threads',
        '2',
        '-b:v',
        '0',
        '-crf',
        '36',
        '-pix_fmt',
        'yuv420p',
        ...audioCodec(info, 'webm'),
        '-f',
        'webm',
      ],
      webm,
      duration,
    ),
    (async () => {
      await run(
        [
          '-i',
          input.master,
          ...streams,
          ...mp4Codec,
          ...audioCodec(info, 'mp4'),
          '-movflags',
          '+faststart',
          '-f',
          'mp4',
        ],
        mp4,
        duration,
      );
      await run(
        [
          '-ss',
          seek.toFixed(3),
          '-i',
          input.master,
          '-frames:v',
          '1',
          '-vf',
          `scale='min(${thumbWidth},iw)':-2`,
          '-q:v',
          '4',
          '-f',
          'image2',
          '-update',
          '1',
        ],
        thumb,
      );
    })(),
  ]);

  // A remux keeps the master's frames, so its probe still holds; an encode is probed anew.
  const probed = remux ? info : await probe(mp4, { signal: input.signal, ffprobePath: input.ffprobePath });
  return {
    formats: [await fileOf(mp4, 'video/mp4'), await fileOf(webm, 'video/webm')],
    thumbnail: await fileOf(thumb, 'image/jpeg'),
    width: probed.width,
    height: probed.height,
    duration: remux ? duration : probed.videoDurationSeconds,
  };
}

/**
 * The picture, and the master's first audio track when it has one: many video models (Veo 3,
 * Kling, Seedance) return clips with sound. A master without sound gets none (no invented silence).
 */
function streamMap(info: ProbeResult): string[] {
  return ['-map', '0:v:0', ...(info.hasAudio ? ['-map', '0:a:0'] : [])];
}

/** Above this a master's AAC is encoded anew, not copied (server/limits/storage-quota.ts counts on it). */
const MAX_COPIED_AUDIO_BITS_PER_SECOND = 320_000;

/**
 * AAC in the MP4 (copied when the master's already is, so the remux stays a remux), Opus in the
 * WebM. Opus takes only 48/24/16/12/8 kHz; ffmpeg resamples to 48 kHz on its own.
 */
function audioCodec(info: ProbeResult, container: 'mp4' | 'webm'): string[] {
  if (!info.hasAudio) return ['-an'];
  if (container === 'webm') return ['-c:a', 'libopus', '-b:a', '96k'];
  const copy = info.audioCodec === 'aac' && (info.audioBitRate ?? 0) <= MAX_COPIED_AUDIO_BITS_PER_SECOND;
  return copy ? ['-c:a', 'copy'] : ['-c:a', 'aac', '-b:a', '128k'];
}

async function imagePipeline(
  input: PipelineInput,
  info: ProbeResult,
  run: Run,
  written: string[],
): Promise<PipelineResult> {
  const png = join(input.workDir, OUTPUT_NAMES.png);
  const webp = join(input.workDir, OUTPUT_NAMES.webp);
  const thumb = join(input.workDir, OUTPUT_NAMES.thumbnail);
  if (info.videoCodec === 'png') {
    const partial = `${png}.partial`;
    written.push(partial, png);
    await copyFile(input.master, partial);
    await rename(partial, png);
  } else {
    await run(['-i', input.master, '-frames:v', '1', '-c:v', 'png', '-f', 'image2', '-update', '1'], png);
  }
  const thumbWidth = Math.min(input.thumbnailWidth ?? 480, info.width);
  await allSettledOrThrow([
    run(['-i', png, '-frames:v', '1', '-c:v', 'libwebp', '-quality', '85', '-f', 'webp'], webp),
    run(
      ['-i', png, '-frames:v', '1', '-vf', `scale=${thumbWidth}:-2`, '-q:v', '4', '-f', 'image2', '-update', '1'],
      thumb,
    ),
  ]);
  return {
    formats: [await fileOf(png, 'image/png'), await fileOf(webp, 'image/webp')],
    thumbnail: await fileOf(thumb, 'image/jpeg'),
    width: info.width,
    height: info.height,
    duration: 0,
  };
}

async function fileOf(path: string, mime: string): Promise<PipelineFile> {
  return { path, mime, bytes: (await stat(path)).size };
}
