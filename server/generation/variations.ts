import { createHash } from 'node:crypto';
import { CONTENT_LIMITS, VideoVariationRequest } from '../../shared/api/index.ts';
import { promptLength } from '../../shared/api/spec-rules.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError, parseOrThrow } from '../errors.ts';
import { isMediaId } from '../storage/layout.ts';
import { getMedia } from '../storage/media-repo.ts';
import type { GenerationPlan } from '../../shared/api/index.ts';
import { finishPlan, resolveModel } from './plan.ts';
import type { Routing } from './plan.ts';
import type { GenerationServices } from './services.ts';

/**
 * `POST /videos/variations`: n new videos from one of the caller's own, planned like a video
 * request of the same model (and version), size, duration and prompt unless the request names
 * another prompt. Each item gets its own seed (seed + i, the seed derived from the source when
 * none is given) and, where the model animates a start image, the source's first frame as it.
 */
export async function planVariation(
  ctx: Routing & Pick<GenerationServices, 'db' | 'origin'>,
  auth: AuthenticatedKey,
  raw: unknown,
): Promise<GenerationPlan> {
  const body = parseOrThrow(VideoVariationRequest, raw);
  const source = isMediaId(body.media_id) ? await getMedia(ctx.db, body.media_id) : undefined;
  // Someone else's item, public or not, is answered like one that does not exist.
  if (!source || source.user_id !== auth.user)
    throw new ApiError('not_found_error', `media ${body.media_id} not found`);
  if (source.kind !== 'video')
    throw new ApiError('invalid_request_error', `media_id: ${source.id} is an image; variations are made of videos`);
  const resolved = resolveModel(ctx, `${source.model}:${source.model_version}`, 'video');
  const model = resolved.model;
  const range = model.parameters.duration ?? { min: 1, max: 30, default: 4 };
  const fixed = (range as { values?: number[] }).values;
  // The source's length where the model still renders it (a remote output may be a little off).
  const length = Math.round(source.duration);
  const duration =
    length >= range.min && length <= range.max && (!fixed || fixed.includes(length)) ? length : range.default;
  // Code points, as every layer counts a prompt (shared/api/spec-rules.ts).
  if (
    body.prompt !== undefined &&
    (body.prompt.length === 0 || promptLength(body.prompt) > CONTENT_LIMITS.promptVideoChars)
  )
    throw new ApiError('invalid_request_error', `prompt must be 1 to ${CONTENT_LIMITS.promptVideoChars} characters`);
  const planned = (frame: boolean) =>
    finishPlan(
      ctx,
      'video',
      resolved,
      {
        prompt: body.prompt ?? source.prompt,
        size: source.size,
        // Routes to providers that take a start image; the frame itself is taken when the run starts.
        ...(frame ? { image_url: `${ctx.origin()}/v1/media/${source.id}` } : {}),
        seed: body.seed ?? sourceSeed(source.id),
        public: body.public,
        routing: body.routing,
        ...(body.provider !== undefined ? { provider: body.provider } : {}),
        unknownParameters: [],
      },
      duration,
      body.n,
    );
  let frame = model.parameters.image_url?.supported === true;
  let plan: GenerationPlan;
  try {
    plan = planned(frame);
  } catch (error) {
    // The provider the request names renders text only: variations by prompt and seed alone.
    if (!frame || !(error instanceof ApiError) || error.status !== 422) throw error;
    frame = false;
    plan = planned(false);
  }
  const { imageUrl: _url, ...rest } = plan;
  return { ...rest, variationOf: source.id, ...(frame ? { startFrameOf: source.id } : {}) };
}

function sourceSeed(id: string): number {
  return createHash('sha256').update(`variation\n${id}`).digest().readUInt32BE(0) & 0x7fffffff;
}
