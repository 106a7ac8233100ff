import type { RoutingPreview } from '../../shared/api/routing.ts';
import type { JobRequest } from '../../shared/ipc/schemas/jobs.ts';
import type { EnqueueInput, JobRoute } from '../core/jobs/index.ts';
import { v1Body } from './job-body.ts';
import type { ServiceSession } from './types.ts';

/**
 * Stands in for a start frame that has no URL yet (a local file the queue uploads at submit, a
 * library item resolved then). Routing only needs to know that a start image is given: the
 * service's preview never fetches image_url (server/routing/preview.ts), so this URL is never
 * requested. `.invalid` (RFC 2606) cannot resolve, should anything ever try.
 */
export const START_FRAME_STAND_IN = 'https://start-frame.invalid/not-uploaded-yet.png';

/** Give a preview at most this long at submit: offline, the job is queued without a route. */
const SUBMIT_PREVIEW_TIMEOUT_MS = 5_000;

/**
 * The one place that decides the stand-in: a body whose start frame has no URL yet (the queue
 * uploads it, or resolves a library item, when the job starts) is previewed with
 * START_FRAME_STAND_IN as its image_url; a body with a URL keeps it.
 */
export function withStartFrameStandIn(
  body: EnqueueInput['request'],
  frameWithoutUrl: boolean,
): EnqueueInput['request'] {
  return frameWithoutUrl && body.image_url === undefined ? { ...body, image_url: START_FRAME_STAND_IN } : body;
}

/** The body a job request's submit sends, with a stand-in for a start frame not uploaded yet. */
export function previewBody(r: JobRequest): EnqueueInput['request'] {
  const frame = r.kind === 'video' ? r.startFrame : undefined;
  const url = frame?.kind === 'url' || frame?.kind === 'upload' ? frame.url : undefined;
  return withStartFrameStandIn(v1Body(r, url), frame !== undefined && url === undefined);
}

/**
 * The route a job is queued with: the preview's row for the mode its body asks for. Null when
 * there is none to be had (offline, an older service, a variations job): the job is queued as
 * before, and the generation's response fills the route in.
 */
export async function routeAtSubmit(s: ServiceSession, queued: EnqueueInput): Promise<JobRoute | null> {
  if (queued.variationOf) return null;
  const body = withStartFrameStandIn(queued.request, queued.startFrame !== null);
  let preview: RoutingPreview;
  try {
    preview = await s.api.previewRouting(body, { timeoutMs: SUBMIT_PREVIEW_TIMEOUT_MS });
  } catch {
    return null;
  }
  const row = preview.rows.find((r) => r.routing === preview.routing);
  if (!row || row.error || !row.provider) return null;
  return {
    routing: row.routing,
    providerId: row.provider.id,
    providerName: row.provider.name,
    price: row.price,
    dropped: row.dropped,
  };
}
