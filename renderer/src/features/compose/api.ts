import type { JobRequestInput, StartFrame as WireStartFrame } from '../../../../shared/ipc/index.ts';
import type { MediaKind } from '../../../../shared/api/media.ts';
import { bridge, ipc } from '../../lib/ipc.ts';
import type { StartFrame } from './store/initialState.ts';
import type { GenerationRequest } from './store/selectors.ts';

/**
 * Turns the composer's start frame into the contract's: a library item is referenced, a file is
 * passed by path in Electron (main uploads it as the job's first step) or uploaded now as bytes in
 * browser mode. Size and type were already checked, so a refused file never gets here.
 */
async function resolveStartFrame(frame: StartFrame): Promise<WireStartFrame> {
  if (frame.source === 'library') {
    if (frame.lastFramePath) return { kind: 'path', path: frame.lastFramePath };
    return { kind: 'item', itemId: frame.mediaId };
  }
  const path = bridge()?.getPathForFile(frame.file) ?? '';
  if (path) return { kind: 'path', path };
  const uploaded = await ipc().uploads.fromBytes({ file: frame.file });
  return { kind: 'upload', mediaId: uploaded.mediaId, url: uploaded.url };
}

export interface Submission {
  media: MediaKind;
  request: GenerationRequest;
  startFrame: StartFrame | null;
  count: number;
  /** Variations of a library video: one job, `count` videos. */
  variationOf?: { mediaId: string; count: number } | null;
  /** "Submit at…": ISO time the jobs wait for; null/absent = now. */
  submitAt?: string | null;
}

/** Queues one job, or N variations (each with its own seed). Returns the job ids. */
export async function submitGeneration(s: Submission): Promise<string[]> {
  const request: JobRequestInput = { ...s.request, kind: s.media };
  // A scheduled submission goes as a batch (of one or more): the batch carries the time.
  const at = s.submitAt ? { submitAt: s.submitAt } : null;
  if (s.variationOf && at) {
    const variations = { ...request, variationOf: s.variationOf.mediaId, variations: s.variationOf.count };
    return (await ipc().jobs.submitBatch({ request: variations, count: 1, ...at })).jobs.map((j) => j.id);
  }
  if (s.variationOf) {
    const job = await ipc().jobs.submit({
      ...request,
      variationOf: s.variationOf.mediaId,
      variations: s.variationOf.count,
    });
    return [job.id];
  }
  if (s.startFrame && s.media === 'video') request.startFrame = await resolveStartFrame(s.startFrame);
  if (s.count <= 1 && !at) return [(await ipc().jobs.submit(request)).id];
  const { jobs } = await ipc().jobs.submitBatch({ request, count: s.count, ...at });
  return jobs.map((j) => j.id);
}
