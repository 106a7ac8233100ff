/**
 * A job's local frames (docs/workflows.md, "The end frame slot"): the start frame and the end
 * frame are files the queue uploads as the job's first step, start first. Each upload's URL goes
 * into the job's request under the frame's field as soon as it is known, so what the request
 * already names is never uploaded again (after a crash, a wait for the service, or a retry).
 */
import { END_IMAGE_PARAMETER } from '../../../shared/api/model-parameters.ts';
import type { GenerationInput, Job } from './state.ts';

export type FrameSlot = 'start' | 'end';

/** The request's field each frame's URL goes in, in upload order. */
const FRAME_FIELDS: Readonly<Record<FrameSlot, string>> = { start: 'image_url', end: END_IMAGE_PARAMETER };
const UPLOAD_ORDER: readonly FrameSlot[] = ['start', 'end'];

/** The next local frame still to go up (its request field is empty), start first; null when none is left. */
export function frameToUpload(
  job: Pick<Job, 'startFrame' | 'endFrame' | 'request'>,
): { frame: FrameSlot; path: string } | null {
  const request = job.request as Record<string, unknown>;
  // `?? null`: a job made before end frames were kept has none.
  const local: Record<FrameSlot, string | null> = { start: job.startFrame, end: job.endFrame ?? null };
  for (const frame of UPLOAD_ORDER) {
    const path = local[frame];
    if (path !== null && !request[FRAME_FIELDS[frame]]) return { frame, path };
  }
  return null;
}

/** The request with `frame`'s uploaded URL in its field. */
export function withFrameUrl(request: GenerationInput, frame: FrameSlot, url: string): GenerationInput {
  return { ...request, [FRAME_FIELDS[frame]]: url };
}
