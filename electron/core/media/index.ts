export { createMediaTools } from './tools.ts';
export type { MediaTools } from './tools.ts';
export { MediaToolError, classifyFfmpegFailure } from './errors.ts';
export type { ProgressState } from '../../../shared/node/ffmpeg.ts';
export type { SequenceOptions } from './sequence.ts';
export type { PreviewOptions } from './operations.ts';
