import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ffmpegPath, ffprobePath } from '../../shared/node/ffmpeg.ts';

const run = promisify(execFile);

export interface StreamFacts {
  codec: string;
  /** Seconds of decoded media: samples / rate for sound, first frame to the last one's end for picture. */
  duration: number;
  /** Presentation time of the first decoded frame, in seconds. */
  start: number;
}

export interface MediaStreams {
  video: StreamFacts | null;
  audio: StreamFacts | null;
  /** How many audio streams the file has. */
  audioStreams: number;
}

interface RawFrame {
  stream_index?: number;
  pts_time?: string;
  best_effort_timestamp_time?: string;
  pkt_duration_time?: string;
  nb_samples?: number;
}

/**
 * What plays in a file, measured by decoding its first video and first audio stream with ffprobe.
 * Decoded, not read from headers: WebM keeps no per-stream duration, and the decoder drops what
 * the player drops (AAC priming, Opus pre-skip), so sync is measured as a viewer would hear it.
 */
export async function mediaStreams(path: string): Promise<MediaStreams> {
  const { stdout } = await run(
    ffprobePath(),
    ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_frames', '--', path],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const raw = JSON.parse(stdout) as {
    streams?: Array<{ index: number; codec_type?: string; codec_name?: string; sample_rate?: string }>;
    frames?: RawFrame[];
  };
  const streams = raw.streams ?? [];
  const frames = raw.frames ?? [];
  const facts = (type: 'video' | 'audio'): StreamFacts | null => {
    const stream = streams.find((s) => s.codec_type === type);
    if (!stream) return null;
    const own = frames.filter((f) => f.stream_index === stream.index);
    const time = (f: RawFrame | undefined) => Number(f?.pts_time ?? f?.best_effort_timestamp_time ?? NaN);
    const start = time(own[0]);
    const duration =
      type === 'audio'
        ? own.reduce((n, f) => n + (f.nb_samples ?? 0), 0) / Number(stream.sample_rate)
        : time(own.at(-1)) + Number(own.at(-1)?.pkt_duration_time ?? 0) - start;
    return { codec: stream.codec_name ?? '', duration, start };
  };
  return {
    video: facts('video'),
    audio: facts('audio'),
    audioStreams: streams.filter((s) => s.codec_type === 'audio').length,
  };
}

/**
 * The silent stretches of a file's first audio track, [start, end] in seconds (ffmpeg's
 * silencedetect, at least 0.2 s below -50 dB): where a sound sits tells whether it is in step.
 */
export async function silences(path: string): Promise<Array<[number, number]>> {
  const { stderr } = await run(
    ffmpegPath(),
    [
      '-hide_banner',
      '-nostdin',
      '-i',
      path,
      '-map',
      '0:a:0',
      '-af',
      'silencedetect=noise=-50dB:d=0.2',
      '-f',
      'null',
      '-',
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const found: Array<[number, number]> = [];
  let start: number | null = null;
  for (const line of stderr.split('\n')) {
    const begin = /silence_start: (-?[\d.]+)/.exec(line);
    if (begin) start = Number(begin[1]);
    const end = /silence_end: (-?[\d.]+)/.exec(line);
    if (end && start !== null) {
      found.push([start, Number(end[1])]);
      start = null;
    }
  }
  // A silence running to the end of the file has no end line.
  if (start !== null) found.push([start, Infinity]);
  return found;
}
