/**
 * The video pipeline, in the spec's order: generate (provider) → transcode (MP4/H.264 and
 * WebM/VP9) → thumbnail → store → URL. Storage and URLs belong to the caller; this part turns a
 * provider's master file into the files that are stored.
 */
export interface PipelineFile {
  mime: string;
  /** Absolute path of a finished file in the work directory. */
  path: string;
  bytes: number;
}

export interface PipelineResult {
  /** First is the primary rendition (MP4 for video, PNG for image). */
  formats: PipelineFile[];
  thumbnail: PipelineFile;
  width: number;
  height: number;
  /** Seconds, probed from the output; 0 for images. */
  duration: number;
}
