/**
 * Pure parsing of ffmpeg progress output, kept apart from the process runner so it can be tested
 * without spawning anything (LosslessCut keeps its parser the same way).
 *
 * ffmpeg reports progress in two shapes:
 * - `-progress pipe:N` key=value blocks: `out_time_ms=1234567` (microseconds, despite the name),
 *   `out_time_us=…`, `out_time=00:00:01.234567`, and `progress=continue|end`;
 * - the human stderr status line: `frame=  42 fps=… time=00:00:01.40 bitrate=…`.
 */

/** Seconds of output written so far in one line of ffmpeg output, or null if the line has none. */
export function parseProgressSeconds(line: string): number | null {
  const micro = /(?:^|\s)out_time_(?:ms|us)=(\d+)/.exec(line);
  if (micro?.[1] !== undefined) return Number(micro[1]) / 1_000_000;
  const clock = /(?:^|\s)(?:out_)?time=\s*(-?)(\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(line);
  if (clock?.[2] !== undefined && clock[3] !== undefined && clock[4] !== undefined) {
    // ffmpeg prints a small negative time before the first frame; that is no progress yet.
    if (clock[1] === '-') return 0;
    return Number(clock[2]) * 3600 + Number(clock[3]) * 60 + Number(clock[4]);
  }
  return null;
}

/**
 * Fraction done in [0, 1] for a line, given the expected output duration in seconds.
 * `progress=end` is 1. Returns null when the line carries no progress or the total is unknown.
 */
export function parseProgressFraction(line: string, totalSeconds: number): number | null {
  if (/(?:^|\s)progress=end\b/.test(line)) return 1;
  if (!(totalSeconds > 0)) return null;
  const seconds = parseProgressSeconds(line);
  if (seconds === null) return null;
  return Math.min(1, Math.max(0, seconds / totalSeconds));
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
