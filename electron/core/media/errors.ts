import type { FfmpegError } from '../../../shared/node/ffmpeg.ts';

/**
 * Why a media operation failed, in words a creator can act on. `code` is stable for callers;
 * `message` names the file and the cause; `detail` keeps ffmpeg's own last lines for logs.
 */
export type MediaErrorCode =
  | 'input_missing'
  | 'input_empty'
  | 'input_not_file'
  | 'input_invalid'
  | 'input_truncated'
  | 'input_no_video'
  | 'input_not_local'
  | 'no_output'
  | 'timeout'
  | 'canceled'
  | 'binary_missing'
  | 'invalid_argument'
  | 'ffmpeg_failed';

export class MediaToolError extends Error {
  readonly code: MediaErrorCode;
  readonly detail: string;
  constructor(code: MediaErrorCode, message: string, detail = '') {
    super(message);
    this.name = 'MediaToolError';
    this.code = code;
    this.detail = detail;
  }
}

const RULES: readonly { test: RegExp; code: MediaErrorCode; explain: string }[] = [
  { test: /No such file or directory/i, code: 'input_missing', explain: 'does not exist' },
  {
    test: /Format not on whitelist/i,
    code: 'input_invalid',
    explain: 'is not a video or image file (its format is not one Clipdesk opens)',
  },
  { test: /Protocol not on whitelist/i, code: 'input_not_local', explain: 'is not a local file' },
  {
    test: /moov atom not found|Invalid NAL unit|partial file|End of file/i,
    code: 'input_truncated',
    explain: 'is truncated or corrupt (not a complete video file)',
  },
  {
    test: /does not contain any stream|matches no streams|Output file #0 does not contain/i,
    code: 'input_no_video',
    explain: 'has no video stream',
  },
  {
    test: /Invalid data found when processing input|could not find codec parameters|Invalid argument/i,
    code: 'input_invalid',
    explain: 'is not a video or image that can be read (corrupt or unsupported)',
  },
];

/** Maps ffmpeg's stderr to a clear error; pure so that it can be tested line by line. */
export function classifyFfmpegFailure(op: string, inputName: string, stderr: string): MediaToolError {
  const detail = lastLines(stderr, 6);
  for (const rule of RULES) {
    if (rule.test.test(stderr)) return new MediaToolError(rule.code, `${op}: ${inputName} ${rule.explain}`, detail);
  }
  return new MediaToolError(
    'ffmpeg_failed',
    `${op} failed on ${inputName}: ${lastLines(stderr, 1) || 'ffmpeg exited with an error'}`,
    detail,
  );
}

function lastLines(text: string, n: number): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !/^(frame=|size=|video:)/.test(l))
    .slice(-n)
    .join('\n');
}

/** The runner's error in a creator's words: a stop, a timeout, a missing binary or ffmpeg's own cause. */
export function fromFfmpegError(op: string, inputName: string, error: FfmpegError, timeoutMs?: number): MediaToolError {
  if (error.failure === 'timeout') {
    const limit = timeoutMs === undefined ? '' : ` than ${Math.round(timeoutMs / 1000)} s`;
    return new MediaToolError('timeout', `${op} of ${inputName} took longer${limit} and was stopped`);
  }
  if (error.failure === 'aborted') return new MediaToolError('canceled', `${op} of ${inputName} was canceled`);
  if (error.failure === 'spawn') return new MediaToolError('binary_missing', `${op}: ${error.message}`);
  return classifyFfmpegFailure(op, inputName, error.stderrTail || error.message);
}
