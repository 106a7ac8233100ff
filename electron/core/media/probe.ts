import { basename } from 'node:path';
import { FfmpegError, runProcess } from '../../../shared/node/ffmpeg.ts';
import type { ProcessRegistry } from '../../../shared/node/ffmpeg.ts';
import { MediaToolError, fromFfmpegError } from './errors.ts';
import { fileUrl, safeInputOptions } from './formats.ts';

export interface VideoStreamInfo {
  codec: string;
  width: number;
  height: number;
  /** Frames per second, from the stream's average rate. */
  fps: number | null;
  frames: number | null;
}

export interface AudioStreamInfo {
  codec: string;
  channels: number | null;
  sampleRate: number | null;
}

export interface MediaInfo {
  formatName: string;
  /** Null for a still image. */
  durationSeconds: number | null;
  bytes: number | null;
  video: VideoStreamInfo | null;
  audio: AudioStreamInfo | null;
  isImage: boolean;
}

const IMAGE_FORMATS = /^(image2|png_pipe|jpeg_pipe|webp_pipe|bmp_pipe)$/;

export function ffprobeArgs(absolutePath: string): string[] {
  return [
    '-v',
    'error',
    ...safeInputOptions(),
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    fileUrl(absolutePath),
  ];
}

/** ffprobe's JSON to MediaInfo; pure. */
export function parseProbeOutput(json: string): MediaInfo {
  const data = JSON.parse(json) as {
    format?: { format_name?: string; duration?: string; size?: string };
    streams?: Record<string, unknown>[];
  };
  const streams = data.streams ?? [];
  const v = streams.find((s) => s['codec_type'] === 'video');
  const a = streams.find((s) => s['codec_type'] === 'audio');
  const formatName = data.format?.format_name ?? 'unknown';
  const isImage = IMAGE_FORMATS.test(formatName);
  const duration = numberOf(data.format?.duration) ?? numberOf(v?.['duration']);
  return {
    formatName,
    durationSeconds: isImage ? null : duration,
    bytes: numberOf(data.format?.size),
    isImage,
    video: v
      ? {
          codec: textOf(v['codec_name']),
          width: Number(v['width'] ?? 0),
          height: Number(v['height'] ?? 0),
          fps: rate(v['avg_frame_rate']) ?? rate(v['r_frame_rate']),
          frames: numberOf(v['nb_frames']),
        }
      : null,
    audio: a
      ? { codec: textOf(a['codec_name']), channels: numberOf(a['channels']), sampleRate: numberOf(a['sample_rate']) }
      : null,
  };
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : 'unknown';
}

function numberOf(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number.parseFloat(value) : NaN;
  return Number.isFinite(n) ? n : null;
}

function rate(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const [num, den] = value.split('/').map(Number);
  if (!num || !den) return null;
  return num / den;
}

export interface ProbeContext {
  ffprobePath: string;
  registry: ProcessRegistry;
  timeoutMs: number;
  signal?: AbortSignal;
  now: () => number;
}

/** Runs ffprobe directly (fluent-ffmpeg's ffprobe cannot be killed), registered like every other child. */
export async function runProbe(absolutePath: string, ctx: ProbeContext): Promise<MediaInfo> {
  const name = basename(absolutePath);
  let output;
  try {
    output = await runProcess(ctx.ffprobePath, ffprobeArgs(absolutePath), {
      op: 'probe',
      registry: ctx.registry,
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      now: ctx.now,
      keepStdout: true,
    });
  } catch (error) {
    if (error instanceof FfmpegError) throw fromFfmpegError('probe', name, error, ctx.timeoutMs);
    throw error;
  }
  let info: MediaInfo;
  try {
    info = parseProbeOutput(output.stdout.toString('utf8'));
  } catch {
    throw new MediaToolError('input_invalid', `probe: ${name} could not be read`, output.stderr);
  }
  if (!info.video) throw new MediaToolError('input_no_video', `probe: ${name} has no video or image stream`);
  return info;
}
