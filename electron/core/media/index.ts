export { createMediaTools } from './tools.ts';
export type { MediaTools, MediaToolsOptions, OperationOptions, OperationResult, RunningMediaProcess } from './tools.ts';
export { MediaToolError, classifyFfmpegFailure } from './errors.ts';
export type { MediaErrorCode } from './errors.ts';
export type { MediaInfo, VideoStreamInfo, AudioStreamInfo } from './probe.ts';
export { parseProbeOutput } from './probe.ts';
export type { MediaBinaries, ProgressState } from '../../../shared/node/ffmpeg.ts';
export type {
  ContactSheetOptions,
  GifOptions,
  Mp4Options,
  PreviewOptions,
  ThumbnailOptions,
  TrimOptions,
  WebmOptions,
} from './operations.ts';
export type { SequenceOptions } from './sequence.ts';
