/**
 * Pure parsing of ffmpeg's stderr, kept apart from the process runner so it can be tested without
 * spawning anything (LosslessCut keeps its parser the same way): the input's `Duration:` line and
 * the periodic stats line (`frame=  15 fps=0.0 q=-0.0 size= 12kB time=00:00:01.00 bitrate=… speed=23.7x`).
 */
export interface ProgressSample {
  frame: number | null;
  fps: number | null;
  /** Seconds of output written so far. */
  timeSeconds: number | null;
  speed: number | null;
  sizeKb: number | null;
}

export interface ProgressState {
  /** Seconds of input (from the first `Duration:` line), or a hint given by the caller. */
  durationSeconds: number | null;
  latest: ProgressSample | null;
  /** 0..1 when the duration is known. */
  fraction: number | null;
}

export const initialProgress = (durationHint: number | null = null): ProgressState => ({
  durationSeconds: durationHint,
  latest: null,
  fraction: null,
});

/** `HH:MM:SS.ss` (or a negative one, which ffmpeg prints before the first frame) to seconds. */
export function parseTimestamp(text: string): number | null {
  const m = /^(-)?(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(text.trim());
  if (!m) return null;
  const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]);
  return m[1] ? -seconds : seconds;
}

export function parseDurationLine(line: string): number | null {
  const m = /Duration:\s*(\d+:\d{2}:\d{2}(?:\.\d+)?)/.exec(line);
  return m?.[1] ? parseTimestamp(m[1]) : null;
}

export function parseProgressLine(line: string): ProgressSample | null {
  if (!/\btime=/.test(line) || !/\b(frame|size)=/.test(line)) return null;
  const field = (name: string): string | null => {
    const m = new RegExp(`\\b${name}=\\s*(\\S+)`).exec(line);
    return m?.[1] ?? null;
  };
  const num = (text: string | null): number | null => {
    if (text === null) return null;
    const n = Number.parseFloat(text);
    return Number.isFinite(n) ? n : null;
  };
  const time = field('time');
  const size = field('L?size');
  return {
    frame: num(field('frame')),
    fps: num(field('fps')),
    timeSeconds: time === null ? null : parseTimestamp(time),
    speed: num(field('speed')?.replace(/x$/, '') ?? null),
    sizeKb: size && /kB$/i.test(size) ? num(size) : null,
  };
}

/** Folds one stderr line into the state; returns the same object when the line says nothing new. */
export function reduceProgress(state: ProgressState, line: string): ProgressState {
  if (state.durationSeconds === null) {
    const duration = parseDurationLine(line);
    if (duration !== null && duration > 0) return { ...state, durationSeconds: duration };
  }
  const sample = parseProgressLine(line);
  if (!sample) return state;
  const fraction =
    state.durationSeconds && sample.timeSeconds !== null
      ? Math.min(1, Math.max(0, sample.timeSeconds / state.durationSeconds))
      : state.fraction;
  return { ...state, latest: sample, fraction };
}

/** Splits a stream of chunks into lines (`\n` or `\r`, as the stderr status line uses `\r`). */
export function createLineSplitter(onLine: (line: string) => void): { push(chunk: string): void; end(): void } {
  let pending = '';
  return {
    push(chunk: string) {
      pending += chunk;
      const parts = pending.split(/\r\n|\r|\n/);
      pending = parts.pop() ?? '';
      for (const part of parts) if (part.length > 0) onLine(part);
    },
    end() {
      if (pending.length > 0) onLine(pending);
      pending = '';
    },
  };
}
