import { MediaToolError } from './errors.ts';

/** The ffmpeg options of each operation, without input/output paths or safety options. Pure. */
export interface OperationArgs {
  inputOptions: string[];
  outputOptions: string[];
  complexFilter?: string;
}

const seconds = (n: number): string => n.toFixed(3);
const evenHeight = (maxHeight: number): string => `scale=-2:trunc(min(ih\\,${maxHeight})/2)*2`;
const IMAGE_OUT = ['-f', 'image2', '-update', '1'];
/** Video required (an audio-only input fails with "matches no streams"); audio kept when present. */
const MAP_AV = ['-map', '0:v:0', '-map', '0:a:0?'];

function nonNegative(op: string, name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new MediaToolError('invalid_argument', `${op}: ${name} must be a number of seconds ≥ 0`);
  return value;
}

function positiveInt(op: string, name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max)
    throw new MediaToolError('invalid_argument', `${op}: ${name} must be a whole number from 1 to ${max}`);
  return value;
}

export interface ThumbnailOptions {
  atSeconds?: number;
  width?: number;
}

/** Seeks on the input (fast: demuxer jumps to the keyframe) and writes one scaled frame. */
export function thumbnailArgs(opts: ThumbnailOptions = {}): OperationArgs {
  const at = nonNegative('thumbnail', 'atSeconds', opts.atSeconds ?? 0);
  const width = positiveInt('thumbnail', 'width', opts.width ?? 320, 4096);
  return {
    // Errors only: a one-frame job has no progress worth parsing, and the errors still classify.
    inputOptions: ['-loglevel', 'error', '-ss', seconds(at)],
    outputOptions: ['-frames:v', '1', '-vf', `scale=${width}:-2`, '-q:v', '3', ...IMAGE_OUT],
  };
}

export interface PreviewOptions {
  maxHeight?: number;
  /** Frames between keyframes: a short GOP lets hover-play start and loop without decoding far. */
  gop?: number;
  /** False drops the sound (hover-play is muted): a smaller file. */
  audio?: boolean;
  crf?: number;
}

/** A small H.264/AAC MP4 any Chromium can play. */
export function previewProxyArgs(opts: PreviewOptions = {}): OperationArgs {
  const maxHeight = positiveInt('preview', 'maxHeight', opts.maxHeight ?? 480, 2160);
  const crf = positiveInt('preview', 'crf', opts.crf ?? 28, 51);
  const gop = opts.gop === undefined ? [] : ['-g', String(positiveInt('preview', 'gop', opts.gop, 600))];
  const sound = opts.audio === false ? ['-an'] : ['-c:a', 'aac', '-b:a', '96k'];
  return {
    inputOptions: [],
    outputOptions: [
      ...(opts.audio === false ? ['-map', '0:v:0'] : MAP_AV),
      '-vf',
      evenHeight(maxHeight),
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      String(crf),
      ...gop,
      '-pix_fmt',
      'yuv420p',
      ...sound,
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ],
  };
}

export interface Mp4Options {
  crf?: number;
  preset?: 'ultrafast' | 'veryfast' | 'fast' | 'medium' | 'slow';
  maxHeight?: number;
}

export function exportMp4Args(opts: Mp4Options = {}): OperationArgs {
  const crf = positiveInt('export MP4', 'crf', opts.crf ?? 20, 51);
  return {
    inputOptions: [],
    outputOptions: [
      ...MAP_AV,
      ...(opts.maxHeight ? ['-vf', evenHeight(opts.maxHeight)] : []),
      '-c:v',
      'libx264',
      '-preset',
      opts.preset ?? 'medium',
      '-crf',
      String(crf),
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '160k',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ],
  };
}

export interface WebmOptions {
  crf?: number;
  /** libvpx `-cpu-used`: 0 best … 8 fastest. */
  speed?: number;
}

export function exportWebmArgs(opts: WebmOptions = {}): OperationArgs {
  const crf = positiveInt('export WebM', 'crf', opts.crf ?? 32, 63);
  const speed = Math.min(8, Math.max(0, Math.round(opts.speed ?? 4)));
  return {
    inputOptions: [],
    outputOptions: [
      ...MAP_AV,
      '-c:v',
      'libvpx-vp9',
      '-b:v',
      '0',
      '-crf',
      String(crf),
      '-deadline',
      'good',
      '-cpu-used',
      String(speed),
      '-row-mt',
      '1',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'libopus',
      '-b:a',
      '128k',
      '-f',
      'webm',
    ],
  };
}

export interface GifOptions {
  fps?: number;
  width?: number;
}

/** Two-pass quality in one run: palettegen on one branch, paletteuse on the other. */
export function exportGifArgs(opts: GifOptions = {}): OperationArgs {
  const fps = positiveInt('export GIF', 'fps', opts.fps ?? 12, 50);
  const width = positiveInt('export GIF', 'width', opts.width ?? 480, 1920);
  return {
    inputOptions: [],
    complexFilter: `[0:v]fps=${fps},scale=${width}:-1:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer`,
    outputOptions: ['-an', '-loop', '0', '-f', 'gif'],
  };
}

export function frameAtArgs(atSeconds: number): OperationArgs {
  const at = nonNegative('frame export', 'time', atSeconds);
  return { inputOptions: ['-ss', seconds(at)], outputOptions: ['-frames:v', '1', '-c:v', 'png', ...IMAGE_OUT] };
}

/** Decodes the last seconds and keeps overwriting one PNG, so the file ends as the final frame. */
export function lastFrameArgs(): OperationArgs {
  return { inputOptions: ['-sseof', '-2'], outputOptions: ['-an', '-c:v', 'png', ...IMAGE_OUT] };
}

export interface ContactSheetOptions {
  frames: number;
  columns?: number;
  tileWidth?: number;
}

export function contactSheetArgs(durationSeconds: number, opts: ContactSheetOptions): OperationArgs {
  const frames = positiveInt('contact sheet', 'frames', opts.frames, 100);
  const columns = positiveInt('contact sheet', 'columns', opts.columns ?? Math.ceil(Math.sqrt(frames)), 100);
  const rows = Math.ceil(frames / columns);
  const tileWidth = positiveInt('contact sheet', 'tileWidth', opts.tileWidth ?? 240, 1920);
  if (!(durationSeconds > 0))
    throw new MediaToolError('invalid_argument', 'contact sheet: the input has no duration (is it a still image?)');
  // One frame every duration/frames seconds, starting half a step in so the ends are not all black.
  const step = durationSeconds / frames;
  return {
    inputOptions: [],
    outputOptions: [
      '-vf',
      `fps=1/${step.toFixed(6)}:start_time=${(step / 2).toFixed(6)},scale=${tileWidth}:-2,tile=${columns}x${rows}`,
      '-frames:v',
      '1',
      '-an',
      '-c:v',
      'png',
      ...IMAGE_OUT,
    ],
  };
}

export interface TrimOptions {
  start: number;
  end: number;
  /** accurate re-encodes (frame exact); fast copies streams (cuts at keyframes). */
  mode?: 'accurate' | 'fast';
}

export function trimArgs(opts: TrimOptions): OperationArgs {
  const start = nonNegative('trim', 'start', opts.start);
  const end = nonNegative('trim', 'end', opts.end);
  if (end <= start) throw new MediaToolError('invalid_argument', 'trim: end must be after start');
  const length = ['-t', seconds(end - start)];
  if (opts.mode === 'fast') {
    return {
      inputOptions: ['-ss', seconds(start)],
      outputOptions: [...MAP_AV, ...length, '-c', 'copy', '-avoid_negative_ts', 'make_zero'],
    };
  }
  return {
    inputOptions: ['-ss', seconds(start)],
    outputOptions: [
      ...MAP_AV,
      ...length,
      '-c:v',
      'libx264',
      '-preset',
      'fast',
      '-crf',
      '18',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '160k',
      '-movflags',
      '+faststart',
    ],
  };
}
