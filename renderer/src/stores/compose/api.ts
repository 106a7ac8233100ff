import type { Job, JobRequestInput, StartFrame as WireStartFrame } from '../../../../shared/ipc/index.ts';
import type { RoutingPreview } from '../../../../shared/api/routing.ts';
import { bridge, ipc } from '../../lib/ipc.ts';
import type { StartFrame } from './initialState.ts';

/**
 * Turns the composer's start frame into the contract's: a library item is referenced, a file is
 * passed by path in Electron (main uploads it as the job's first step) or uploaded now as bytes in
 * browser mode. Size and type were already checked, so a refused file never gets here.
 */
async function resolveStartFrame(frame: StartFrame): Promise<WireStartFrame> {
  if (frame.source === 'job') return frame.frame;
  if (frame.source === 'library') {
    if (frame.lastFramePath) return { kind: 'path', path: frame.lastFramePath };
    return { kind: 'item', itemId: frame.mediaId };
  }
  const path = bridge()?.getPathForFile(frame.file) ?? '';
  if (path) return { kind: 'path', path };
  const uploaded = await ipc().uploads.fromBytes({ file: frame.file });
  return { kind: 'upload', mediaId: uploaded.mediaId, url: uploaded.url };
}

/** How a submit is made besides its request (docs/workflows.md, "The canvas"). */
export interface SubmitOptions {
  /** How many jobs, each with its own seed (variations: always one job). */
  count: number;
  /** Variations of a library video: one job, `count` videos. */
  variationOf?: { mediaId: string; count: number } | null;
  /** "Submit at…": ISO time the jobs wait for; null/absent = now. */
  submitAt?: string | null;
  /** The end frame, for a model that takes one (selectors.ts, endFrameFor). */
  endFrame?: StartFrame | null;
}

/** The form's job request with the composer's start frame resolved into the contract's. */
async function withStartFrame(
  request: JobRequestInput,
  frame: StartFrame | null,
  variationOf: SubmitOptions['variationOf'],
  endFrame: StartFrame | null = null,
): Promise<JobRequestInput> {
  if (variationOf) return { ...request, variationOf: variationOf.mediaId, variations: variationOf.count };
  if (!frame || request.kind !== 'video') return request;
  return {
    ...request,
    startFrame: await resolveStartFrame(frame),
    // An end frame goes only beside a start frame (the service refuses it alone), resolved the same way.
    ...(endFrame ? { endFrame: await resolveStartFrame(endFrame) } : {}),
    ...(frame.source === 'library' && frame.continues ? { parentItemId: frame.continues } : {}),
  };
}

/**
 * The one submit route (docs/workflows.md, "The canvas"): Generate, ×N, Re-roll, Variations and
 * Extend all send a job request through `jobs.submitBatch`, whatever they ask for. `count` jobs
 * (each its own seed); variations are one job of `variations` videos. Returns the jobs queued.
 */
export async function submitJobRequest(
  request: JobRequestInput,
  count = 1,
  submitAt: string | null = null,
): Promise<Job[]> {
  const { jobs } = await ipc().jobs.submitBatch({ request, count, ...(submitAt ? { submitAt } : {}) });
  return jobs;
}

/** Queues one job, or N (each with its own seed), or one job of variations. */
export async function submitGeneration(
  request: JobRequestInput,
  frame: StartFrame | null,
  options: SubmitOptions,
): Promise<Job[]> {
  const resolved = await withStartFrame(request, frame, options.variationOf, options.endFrame ?? null);
  return submitJobRequest(resolved, options.variationOf ? 1 : options.count, options.submitAt ?? null);
}

/**
 * Stands in for the prompt of a preview: routing never reads the prompt (only the submit's
 * validation, which the composer checks itself), so typing does not cost a call per pause.
 */
const PREVIEW_PROMPT = 'routing preview';

/**
 * The composer's start frame as a preview names it, without uploading anything: main previews a
 * frame it has no URL for yet through a stand-in URL that the service never fetches
 * (handlers/compose.ts), since routing only asks whether a start image is given.
 */
function previewStartFrame(frame: StartFrame): WireStartFrame {
  if (frame.source === 'job') return frame.frame;
  if (frame.source === 'library')
    return frame.lastFramePath ? { kind: 'path', path: frame.lastFramePath } : { kind: 'item', itemId: frame.mediaId };
  return { kind: 'path', path: bridge()?.getPathForFile(frame.file) || frame.name };
}

/** What the service's routing would do with this request under each mode (`compose.preview`). */
export function previewRouting(
  request: JobRequestInput,
  frame: StartFrame | null,
  endFrame: StartFrame | null = null,
): Promise<RoutingPreview> {
  const previewed: JobRequestInput = { ...request, prompt: PREVIEW_PROMPT };
  if (frame && request.kind === 'video') previewed.startFrame = previewStartFrame(frame);
  if (frame && endFrame && request.kind === 'video') previewed.endFrame = previewStartFrame(endFrame);
  return ipc().compose.preview(previewed);
}
