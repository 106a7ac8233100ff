import { MediaToolError } from './errors.ts';
import type { OperationArgs } from './operations.ts';

/** What the sequence needs to know of each shot (from a probe). */
export interface SequenceClip {
  /** Seconds; the length of the silence a shot without sound gets. */
  durationSeconds: number;
  width: number;
  height: number;
  fps: number | null;
  hasAudio: boolean;
}

export interface SequenceOptions {
  /** Frame size of the result; default the first shot's (rounded down to even). */
  width?: number;
  height?: number;
  /** Frame rate of the result; default the first shot's (30 when unknown). */
  fps?: number;
  crf?: number;
  preset?: 'ultrafast' | 'veryfast' | 'fast' | 'medium' | 'slow';
}

export const MAX_SEQUENCE_CLIPS = 100;
/** Every shot's sound is brought to this before concat, which needs identical parameters. */
const AUDIO_FORMAT = 'aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo';

const even = (n: number): number => Math.max(2, Math.floor(n / 2) * 2);

function sizeOf(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 2 || value > 7680)
    throw new MediaToolError('invalid_argument', `sequence: ${name} must be a whole number of pixels from 2 to 7680`);
  return even(value);
}

/**
 * Shots back to back in one H.264/AAC MP4 (concat filter). Shots from different providers differ
 * in size and frame rate, so each is fitted into one frame (letterboxed) at one rate first. When
 * any shot has sound, every shot gets an audio segment, silence for the silent ones, so that
 * concat keeps sound and picture in step; when none has, the result has no audio track.
 * Timestamps are not reset per stream (that would shift a sound that starts after its picture,
 * as in a stream-copy trim): both start at the file's zero, the picture's first frame is held and
 * the sound's gaps are filled with silence from there. Pure.
 */
export function sequenceArgs(clips: readonly SequenceClip[], opts: SequenceOptions = {}): OperationArgs {
  if (clips.length < 1 || clips.length > MAX_SEQUENCE_CLIPS)
    throw new MediaToolError('invalid_argument', `sequence: give 1 to ${MAX_SEQUENCE_CLIPS} clips`);
  for (const [i, clip] of clips.entries()) {
    if (!(clip.durationSeconds > 0))
      throw new MediaToolError('invalid_argument', `sequence: clip ${i + 1} has no duration (is it a still image?)`);
  }
  const first = clips[0]!;
  const width = sizeOf('width', opts.width ?? first.width);
  const height = sizeOf('height', opts.height ?? first.height);
  const fps = opts.fps ?? (first.fps && first.fps > 0 && first.fps <= 120 ? first.fps : 30);
  if (!Number.isFinite(fps) || fps <= 0 || fps > 120)
    throw new MediaToolError('invalid_argument', 'sequence: fps must be a number above 0, at most 120');
  const crf = opts.crf ?? 20;
  if (!Number.isInteger(crf) || crf < 1 || crf > 51)
    throw new MediaToolError('invalid_argument', 'sequence: crf must be a whole number from 1 to 51');
  const withSound = clips.some((c) => c.hasAudio);
  const rate = Number(fps.toFixed(3));

  const chains: string[] = [];
  const segments: string[] = [];
  for (const [i, clip] of clips.entries()) {
    chains.push(
      `[${i}:v:0]scale=${width}:${height}:force_original_aspect_ratio=decrease,` +
        `pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${rate}:start_time=0,format=yuv420p[v${i}]`,
    );
    segments.push(`[v${i}]`);
    if (!withSound) continue;
    chains.push(
      clip.hasAudio
        ? `[${i}:a:0]aresample=48000:async=1:first_pts=0,${AUDIO_FORMAT}[a${i}]`
        : `anullsrc=channel_layout=stereo:sample_rate=48000,atrim=duration=${clip.durationSeconds.toFixed(3)},${AUDIO_FORMAT}[a${i}]`,
    );
    segments.push(`[a${i}]`);
  }
  chains.push(`${segments.join('')}concat=n=${clips.length}:v=1:a=${withSound ? 1 : 0}[v]${withSound ? '[a]' : ''}`);

  return {
    inputOptions: [],
    complexFilter: chains.join(';'),
    outputOptions: [
      '-map',
      '[v]',
      ...(withSound ? ['-map', '[a]', '-c:a', 'aac', '-b:a', '160k'] : ['-an']),
      '-c:v',
      'libx264',
      '-preset',
      opts.preset ?? 'medium',
      '-crf',
      String(crf),
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
    ],
  };
}
