import { createHash } from 'node:crypto';
import { VideoVariationRequest } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/keys.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError, parseOrThrow } from '../errors.ts';
import { isMediaId } from '../storage/layout.ts';
import { getMedia } from '../storage/media-repo.ts';
import type { Plan } from './generate.ts';
import { finishPlan, resolveModel } from './generate.ts';

/**
 * `POST /videos/variations`: n new videos from one of the caller's own, planned like a video
 * request of the same model (and version), size, duration and prompt unless the request names
 * another prompt. Each item gets its own seed (seed + i, the seed derived from the source when
 * none is given) and, where the model animates a start image, the source's first frame as it.
 */
export function planVariation(ctx: ServiceContext, auth: AuthenticatedKey, raw: unknown): Plan {
  const body = parseOrThrow(VideoVariationRequest, raw);
  const source = isMediaId(body.media_id) ? getMedia(ctx.db, body.media_id) : undefined;
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
  const frame = model.parameters.image_url?.supported === true;
  const plan = finishPlan(
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
  const { imageUrl: _url, ...rest } = plan;
  return { ...rest, variationOf: source.id, ...(frame ? { startFrameOf: source.id } : {}) };
}

function sourceSeed(id: string): number {
  return createHash('sha256').update(`variation\n${id}`).digest().readUInt32BE(0) & 0x7fffffff;
}
