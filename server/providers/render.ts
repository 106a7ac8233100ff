import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKGROUND_NICENESS, FfmpegError, probe, runFfmpeg } from '../../shared/node/ffmpeg.ts';
import { RenderError } from './errors.ts';
import { buildScene } from './scene.ts';
import type { RenderJob, RenderOutput } from './types.ts';

export interface Binaries {
  ffmpegPath?: string;
  ffprobePath?: string;
}

export interface Quality {
  preset: 'ultrafast' | 'veryfast';
  crf: number;
  fps: number;
}

/** The longest a single render may take before it counts as a provider failure. */
const RENDER_TIMEOUT_MS = 10 * 60_000;

/**
 * Renders a job into a master file in `job.workDir`: an MP4 (H.264, yuv420p) for video, a PNG
 * for an image. Writes to a temporary name and renames when complete and checked, so a reader
 * never sees a half-written master; on any failure the partial file is removed.
 */
export async function renderJob(
  job: RenderJob,
  providerSlug: string,
  quality: Quality,
  bins: Binaries,
): Promise<RenderOutput> {
  if (job.signal.aborted) throw new RenderError('aborted', 'render cancelled before it started');
  if (job.startImagePath !== undefined) await checkStartImage(job.startImagePath, job.signal, bins);

  const still = job.kind === 'image';
  const scene = buildScene({
    model: job.model,
    prompt: job.prompt,
    seed: job.seed,
    style: job.style,
    width: job.width,
    height: job.height,
    fps: quality.fps,
    durationSeconds: still ? 0 : job.durationSeconds,
    startImagePath: still ? undefined : job.startImagePath,
  });

  const ext = still ? 'png' : 'mp4';
  const tag = randomBytes(4).toString('hex');
  const finalPath = join(job.workDir, `master-${providerSlug}-${tag}.${ext}`);
  const partialPath = `${finalPath}.partial`;
  const encode = still
    ? ['-frames:v', '1', '-c:v', 'png', '-f', 'image2', '-update', '1']
    : [
        '-frames:v',
        String(scene.frames),
        '-r',
        String(quality.fps),
        '-c:v',
        'libx264',
        '-preset',
        quality.preset,
        '-crf',
        String(quality.crf),
        '-pix_fmt',
        'yuv420p',
        '-g',
        String(quality.fps * 2),
        '-threads',
        '2',
        '-movflags',
        '+faststart',
        '-an',
        '-f',
        'mp4',
      ];
  const args = [...scene.inputs, '-filter_complex', scene.filter, '-map', '[out]', ...encode, '-y', partialPath];

  try {
    await runFfmpeg(args, {
      op: 'render',
      signal: job.signal,
      niceness: BACKGROUND_NICENESS,
      timeoutMs: RENDER_TIMEOUT_MS,
      totalSeconds: still ? undefined : job.durationSeconds,
      ffmpegPath: bins.ffmpegPath,
    });
    await checkOutput(partialPath, job, scene.frames / quality.fps, bins);
    await rename(partialPath, finalPath);
  } catch (err) {
    await rm(partialPath, { force: true });
    throw toRenderError(err, job.signal);
  }
  return { path: finalPath, mime: still ? 'image/png' : 'video/mp4' };
}

/** A start image must decode to at least one frame; anything else is the client's error. */
async function checkStartImage(path: string, signal: AbortSignal, bins: Binaries): Promise<void> {
  try {
    const info = await probe(path, { signal, ffprobePath: bins.ffprobePath });
    if (!info.hasVideo || info.width <= 0 || info.height <= 0) {
      throw new RenderError('invalid_input', 'start image is not an image (no picture found in it)');
    }
    // Decoding the first frame catches truncated or corrupt data that the header alone hides.
    const { stderr } = await runFfmpeg(['-v', 'error', '-xerror', '-i', path, '-frames:v', '1', '-f', 'null', '-'], {
      signal,
      timeoutMs: 60_000,
      ffmpegPath: bins.ffmpegPath,
    });
    if (stderr.trim().length > 0)
      throw new RenderError('invalid_input', `start image could not be decoded: ${firstLine(stderr)}`);
  } catch (err) {
    if (err instanceof RenderError) throw err;
    if (signal.aborted) throw new RenderError('aborted', 'render cancelled', { cause: err });
    const detail = err instanceof FfmpegError ? firstLine(err.stderrTail) || err.message : String(err);
    throw new RenderError('invalid_input', `start image could not be decoded: ${detail}`, { cause: err });
  }
}

async function checkOutput(path: string, job: RenderJob, expectedSeconds: number, bins: Binaries): Promise<void> {
  const info = await probe(path, { signal: job.signal, ffprobePath: bins.ffprobePath });
  if (info.width !== job.width || info.height !== job.height) {
    throw new RenderError(
      'provider_failure',
      `rendered ${info.width}x${info.height}, expected ${job.width}x${job.height}`,
    );
  }
  if (job.kind === 'video' && Math.abs(info.durationSeconds - expectedSeconds) > 0.05) {
    throw new RenderError('provider_failure', `rendered ${info.durationSeconds}s, expected ${expectedSeconds}s`);
  }
}

function toRenderError(err: unknown, signal: AbortSignal): RenderError {
  if (err instanceof RenderError) return err;
  if (signal.aborted || (err instanceof FfmpegError && err.failure === 'aborted')) {
    return new RenderError('aborted', 'render cancelled', { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new RenderError('provider_failure', `render failed: ${message}`, { cause: err });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.trim() ?? '';
}
