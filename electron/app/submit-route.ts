import type { RoutingPreview } from '../../shared/api/routing.ts';
import type { JobRequest } from '../../shared/ipc/schemas/jobs.ts';
import type { GenerationInput, JobRoute, NewJob } from '../core/jobs/index.ts';
import { END_IMAGE_PARAMETER } from '../../shared/api/model-parameters.ts';
import { v1Body } from './job-body.ts';
import type { ServiceSession } from './types.ts';

/**
 * Stands in for a start frame that has no URL yet (a local file the queue uploads as the job's
 * first step, a library item resolved at submit). Routing only needs to know that a start image is given: the
 * service's preview never fetches image_url (server/generation/routing-preview.ts), so this URL is never
 * requested. `.invalid` (RFC 2606) cannot resolve, should anything ever try.
 */
export const START_FRAME_STAND_IN = 'https://start-frame.invalid/not-uploaded-yet.png';

/** Give a preview at most this long at submit: offline, the job is queued without a route. */
const SUBMIT_PREVIEW_TIMEOUT_MS = 5_000;

/** A preview Compose just showed is the submit's route for this long (docs/workflows.md). */
const PREVIEW_REUSE_MS = 60_000;

type KeptPreview = { at: number; preview: RoutingPreview };
const recentPreviews = new WeakMap<object, Map<string, KeptPreview>>();

/** A body's routing, whatever its prompt: routing never reads the prompt (server/generation/routing-preview.ts). */
function routingKey(body: GenerationInput): string {
  const rest: Record<string, unknown> = { ...body };
  delete rest['prompt'];
  return JSON.stringify(
    Object.keys(rest)
      .sort()
      .map((k) => [k, rest[k]]),
  );
}

/**
 * The routing preview of a body, asked of the service and kept for `PREVIEW_REUSE_MS`, so the
 * Generate that follows Compose's preview reuses it instead of asking again: every preview is a
 * request counted against the account's rate limit (docs/api.md).
 */
export async function previewRoutingOnce(
  s: Pick<ServiceSession, 'api'>,
  body: GenerationInput,
  options: { signal?: AbortSignal; timeoutMs?: number; now?: () => number } = {},
): Promise<RoutingPreview> {
  const now = options.now ?? Date.now;
  let kept = recentPreviews.get(s.api);
  if (!kept) {
    kept = new Map<string, KeptPreview>();
    recentPreviews.set(s.api, kept);
  }
  const key = routingKey(body);
  const hit = kept.get(key);
  if (hit && now() - hit.at < PREVIEW_REUSE_MS) return hit.preview;
  const preview = await s.api.previewRouting(body, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  for (const [k, v] of kept) if (now() - v.at >= PREVIEW_REUSE_MS) kept.delete(k);
  kept.set(key, { at: now(), preview });
  return preview;
}

/** Forgets the previews kept for this client: a provider change may route the same body elsewhere. */
export function forgetPreviews(api: object): void {
  recentPreviews.delete(api);
}

/** Stands in for an end frame not uploaded yet (the queue uploads it after the start frame), as START_FRAME_STAND_IN does. */
export const END_FRAME_STAND_IN = 'https://end-frame.invalid/not-uploaded-yet.png';

/**
 * The one place that decides the stand-ins: a frame that has no URL yet (the queue uploads it, or
 * resolves a library item, when the job starts) is previewed with its stand-in under its field
 * (image_url, end_image_url); a frame with a URL keeps it.
 */
function withFrameStandIns(body: GenerationInput, withoutUrl: { start: boolean; end: boolean }): GenerationInput {
  const start = withoutUrl.start && body.image_url === undefined ? { image_url: START_FRAME_STAND_IN } : {};
  const end =
    withoutUrl.end && body[END_IMAGE_PARAMETER] === undefined ? { [END_IMAGE_PARAMETER]: END_FRAME_STAND_IN } : {};
  return { ...body, ...start, ...end };
}

/** A frame's URL when it has one now (given as a URL, or uploaded already). */
function frameUrl(frame: JobRequest['startFrame']): string | undefined {
  return frame?.kind === 'url' || frame?.kind === 'upload' ? frame.url : undefined;
}

/** The body a job request's submit sends, with stand-ins for a start and an end frame not uploaded yet. */
export function previewBody(r: JobRequest): GenerationInput {
  const frame = r.kind === 'video' ? r.startFrame : undefined;
  const end = r.kind === 'video' ? r.endFrame : undefined;
  const url = frameUrl(frame);
  const endUrl = frameUrl(end);
  return withFrameStandIns(v1Body(r, url, endUrl), {
    start: frame !== undefined && url === undefined,
    end: end !== undefined && endUrl === undefined,
  });
}

/**
 * The route a job is queued with: the preview's row for the mode its body asks for. Null when
 * there is none to be had (offline, an older service, a variations job): the job is queued as
 * before, and the generation's response fills the route in. Local frames are previewed through
 * their stand-ins, as previewBody does: the route and price shown are the ones the submit keeps.
 */
export async function routeAtSubmit(s: ServiceSession, queued: NewJob): Promise<JobRoute | null> {
  if (queued.variationOf) return null;
  const body = withFrameStandIns(queued.request, {
    start: (queued.startFrame ?? null) !== null,
    end: (queued.endFrame ?? null) !== null,
  });
  let preview: RoutingPreview;
  try {
    preview = await previewRoutingOnce(s, body, { timeoutMs: SUBMIT_PREVIEW_TIMEOUT_MS });
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
