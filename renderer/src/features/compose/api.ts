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
}

/** Queues one job, or N variations (each with its own seed). Returns the job ids. */
export async function submitGeneration(s: Submission): Promise<string[]> {
  const request: JobRequestInput = { ...s.request, kind: s.media };
  if (s.variationOf) {
    const job = await ipc().jobs.submit({
      ...request,
      variationOf: s.variationOf.mediaId,
      variations: s.variationOf.count,
    });
    return [job.id];
  }
  if (s.startFrame && s.media === 'video') {
    request.startFrame = await resolveStartFrame(s.startFrame);
    if (s.startFrame.source === 'library' && s.startFrame.continues) request.parentItemId = s.startFrame.continues;
  }
  if (s.count <= 1) return [(await ipc().jobs.submit(request)).id];
  const { jobs } = await ipc().jobs.submitBatch({ request, count: s.count });
  return jobs.map((j) => j.id);
}
