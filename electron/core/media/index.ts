export { createMediaTools } from './tools.ts';
export type { MediaTools, MediaToolsOptions, OperationOptions, OperationResult, RunningMediaProcess } from './tools.ts';
export { MediaToolError, classifyFfmpegFailure } from './errors.ts';
export type { MediaErrorCode } from './errors.ts';
export type { MediaInfo, VideoStreamInfo, AudioStreamInfo } from './probe.ts';
export { parseProbeOutput } from './probe.ts';
export type { ProgressState, ProgressSample } from './progress.ts';
export { initialProgress, parseDurationLine, parseProgressLine, parseTimestamp, reduceProgress } from './progress.ts';
export { resolveMediaBinaries } from './binaries.ts';
export type { MediaBinaries } from './binaries.ts';
export type {
  ContactSheetOptions,
  GifOptions,
  Mp4Options,
  PreviewOptions,
  ThumbnailOptions,
  TrimOptions,
  WebmOptions,
} from './operations.ts';
