/**
 * How a run of ffmpeg or ffprobe failed. Callers translate it into their own domain (the app's
 * `MediaToolError`, the service's `RenderError`); `stderrTail` keeps what ffmpeg said.
 */
export type FfmpegFailure = 'exit' | 'spawn' | 'timeout' | 'aborted';

export class FfmpegError extends Error {
  readonly failure: FfmpegFailure;
  readonly exitCode: number | null;
  /** The last lines ffmpeg wrote to stderr (progress lines left out), which say what went wrong. */
  readonly stderrTail: string;
  constructor(message: string, failure: FfmpegFailure, exitCode: number | null, stderrTail: string) {
    super(stderrTail ? `${message}\n${stderrTail}` : message);
    this.name = failure === 'aborted' ? 'AbortError' : 'FfmpegError';
    this.failure = failure;
    this.exitCode = exitCode;
    this.stderrTail = stderrTail;
  }
}

const TAIL_LINES = 12;

export function stderrTail(stderr: string, lines = TAIL_LINES): string {
  return stderr
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !/^(frame=|size=|video:)/.test(l))
    .slice(-lines)
    .join('\n');
}
