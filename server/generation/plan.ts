import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type {
  Charge,
  ChargeRequest,
  Feature,
  GenerationPlan,
  MediaKind,
  PlannedCandidate,
  RoutingMode,
} from '../../shared/api/index.ts';
import {
  chargeFor,
  END_IMAGE_PARAMETER,
  imageParameterNames,
  ImageGenerationRequest,
  requestAudio,
  VideoGenerationRequest,
} from '../../shared/api/index.ts';
import type { GenerationServices } from './services.ts';
import { ApiError, parseOrThrow } from '../errors.ts';
import {
  defaultSize,
  findOffer,
  offerSupportsSize,
  requestFeatures,
  sizeDimensions,
} from '../providers/model-definitions.ts';
import type { ModelDefinition } from '../providers/model-definitions.ts';
import type { RouteCandidate, RouteRequest } from '../routing/route.ts';
import { routeRequest } from '../routing/route.ts';
import { modelParameterValues } from './model-parameters.ts';

/**
 * The model parameters a candidate receives: the plan's, less the ones routing dropped for it and
 * the end frame, which goes as a file (ProviderTask.endImage): a provider never gets our URL.
 */
export function providerParameters(plan: GenerationPlan, candidate: RouteCandidate): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(plan.parameters).filter(
      ([name]) => name !== END_IMAGE_PARAMETER && !candidate.ignoredParameters.includes(name),
    ),
  );
}

/** What planning reads: the catalog (its models, providers and their availability). */
export type Routing = Pick<GenerationServices, 'catalog'>;

/** What running a plan's routing reads besides: which providers are cooling down. */
export type RoutingNow = Pick<GenerationServices, 'catalog' | 'providerHealth'>;

/** `POST /videos/generations`. */
export function planVideo(ctx: Routing, raw: unknown): GenerationPlan {
  return routePlan(ctx, draftVideo(ctx, raw));
}

/** `POST /images/generations`. */
export function planImage(ctx: Routing, raw: unknown): GenerationPlan {
  return routePlan(ctx, draftImage(ctx, raw));
}

/**
 * A validated request before routing: the plan's fields, and what the request asks of routing
 * that the plan does not keep (the features it uses, a named provider, fields no model takes).
 * The routing preview (server/generation/routing-preview.ts) routes one draft under every mode,
 * so a body that is wrong whatever the mode is refused as the generation would refuse it.
 */
export type Draft = Omit<GenerationPlan, 'candidates' | 'ranking'> &
  Required<Pick<RouteRequest, 'features' | 'unknownParameters'>> &
  Pick<RouteRequest, 'provider'>;

/** A `POST /videos/generations` body, validated (its 400s), not routed. */
export function draftVideo(ctx: Routing, raw: unknown): Draft {
  const body = parseOrThrow(VideoGenerationRequest, raw);
  const model = resolveModel(ctx, body.model, 'video');
  const rules = model.model.parameters;
  const range = rules.duration ?? { min: 1, max: 30, default: 4 };
  const duration = body.duration ?? range.default;
  if (duration < range.min || duration > range.max) {
    throw new ApiError(
      'invalid_request_error',
      `duration: ${model.model.id} renders ${range.min} to ${range.max} seconds, not ${duration}`,
    );
  }
  // Models whose every provider has fixed durations (Kling: 5 or 10) list them.
  const fixed = (range as { values?: number[] }).values;
  if (fixed && !fixed.includes(duration)) {
    throw new ApiError(
      'invalid_request_error',
      `duration: ${model.model.id} renders ${fixed.join(' or ')} seconds, not ${duration}`,
    );
  }
  if (body.image_url !== undefined && rules.image_url?.supported !== true) {
    throw new ApiError('unsupported_parameter', `image_url: ${model.model.id} does not take a start image`);
  }
  // An end frame closes an image-to-video clip: the providers take it only beside a start frame.
  for (const name of imageParameterNames(rules)) {
    const given = (body as Record<string, unknown>)[name];
    if (given !== undefined && given !== null && body.image_url === undefined)
      throw new ApiError('invalid_request_error', `${name}: an end frame needs a start frame (image_url)`);
  }
  const unknownParameters = unknownFields(raw, VideoGenerationRequest.shape, model.model);
  return draftPlan(ctx, 'video', model, { ...body, unknownParameters }, duration, 1);
}

/** A `POST /images/generations` body, validated (its 400s), not routed. */
export function draftImage(ctx: Routing, raw: unknown): Draft {
  const body = parseOrThrow(ImageGenerationRequest, raw);
  const model = resolveModel(ctx, body.model, 'image');
  const { id, parameters } = model.model;
  const bound = parameters.n ?? { min: 1, max: 1, default: 1 };
  const n = body.n ?? bound.default;
  if (n < bound.min || n > bound.max) {
    throw new ApiError(
      'invalid_request_error',
      `n: ${id} makes ${bound.min} to ${bound.max} images per request, not ${n}`,
    );
  }
  // OpenAI's quality values: the procedural renderers have one quality, which the low-to-standard
  // values all name; a request for more is refused rather than silently not honoured.
  if (body.quality === 'hd' || body.quality === 'high') {
    throw new ApiError(
      'unsupported_parameter',
      `quality: ${id} renders one quality (standard); '${body.quality}' is not offered. ` +
        'For more detail ask for a larger size (up to 4096x4096)',
    );
  }
  // OpenAI's `natural` is the model's own, unstyled look; `vivid` is one of our styles.
  const style = body.style === 'natural' ? undefined : body.style;
  const unknownParameters = unknownFields(raw, ImageGenerationRequest.shape, model.model);
  return draftPlan(ctx, 'image', model, { ...body, style, unknownParameters }, 0, n);
}

/** Body fields that are neither the request schema's nor the model's parameters (routing decides their fate). */
function unknownFields(raw: unknown, shape: object, model: ModelDefinition): string[] {
  if (typeof raw !== 'object' || raw === null) return [];
  return Object.keys(raw).filter((k) => !Object.hasOwn(shape, k) && !Object.hasOwn(model.parameters, k));
}

export function resolveModel(ctx: Routing, id: string, kind: MediaKind): { model: ModelDefinition; version: string } {
  const found = ctx.catalog.findModel(id);
  if (!found) throw new ApiError('not_found_error', `unknown model '${id}' (see GET /v1/models)`);
  if (found.model.media !== kind) {
    const other = found.model.media === 'video' ? '/videos/generations' : '/images/generations';
    throw new ApiError(
      'invalid_request_error',
      `model: ${found.model.id} makes ${found.model.media}s; use POST /v1${other}`,
    );
  }
  return { model: found.model, version: found.version };
}

export function finishPlan(...args: Parameters<typeof draftPlan>): GenerationPlan {
  return routePlan(args[0], draftPlan(...args));
}

function draftPlan(
  ctx: Routing,
  kind: MediaKind,
  resolved: { model: ModelDefinition; version: string },
  // The parsed v1 body (an image's has the same fields, a variation's is made of its source's).
  body: Pick<
    z.output<typeof VideoGenerationRequest>,
    'prompt' | 'size' | 'style' | 'image_url' | 'seed' | 'public' | 'routing' | 'provider'
  > &
    Pick<Draft, 'unknownParameters'>,
  duration: number,
  count: number,
): Draft {
  const { model } = resolved;
  const parameters = modelParameterValues(body, model.id, model.parameters);
  const audio = parameters['audio'] === true ? true : undefined;
  // Sound as asked, else the model's default (docs/providers.md, "Prices").
  const pricedAudio = requestAudio(parameters['audio'], model.parameters['audio'] as { default?: unknown } | undefined);
  const size = (body.size ?? defaultSize(model)).trim().toLowerCase();
  const dims = sizeDimensions(model, size);
  if (!dims) {
    const values = model.parameters.size?.values ?? [];
    throw new ApiError(
      'invalid_request_error',
      `size: ${model.id} does not offer '${size}' (sizes: ${values.join(', ')})`,
    );
  }
  if (body.style !== undefined) {
    const styles = model.parameters.style?.values;
    if (!styles) throw new ApiError('unsupported_parameter', `style: ${model.id} does not take a style`);
    if (!styles.includes(body.style))
      throw new ApiError('invalid_request_error', `style must be one of ${styles.join(', ')}`);
  }
  const features: Feature[] = requestFeatures({
    media: kind,
    size,
    image_url: body.image_url,
    style: body.style,
    seed: body.seed,
    audio,
  });
  return {
    kind,
    model: model.id,
    version: resolved.version,
    prompt: body.prompt,
    size,
    width: dims.width,
    height: dims.height,
    duration,
    count,
    style: body.style,
    imageUrl: body.image_url,
    // Without a seed the prompt picks one, so the same request gives the same frames.
    seed: body.seed ?? promptSeed(body.prompt),
    public: body.public,
    routing: body.routing,
    parameters,
    ...(audio ? { audio } : {}),
    ...(pricedAudio !== undefined ? { pricedAudio } : {}),
    features,
    ...(body.provider !== undefined ? { provider: body.provider } : {}),
    unknownParameters: body.unknownParameters,
  };
}

/** What routing is asked for a draft under `mode`: made from the draft, so the two cannot disagree. */
export function routeRequestOf(draft: Draft, mode: RoutingMode): RouteRequest {
  return {
    media: draft.kind,
    model: draft.model,
    size: draft.size,
    ...(draft.kind === 'video' ? { durationSeconds: draft.duration } : {}),
    ...(typeof draft.parameters['aspect_ratio'] === 'string' ? { aspectRatio: draft.parameters['aspect_ratio'] } : {}),
    features: draft.features,
    parameters: Object.keys(draft.parameters),
    charge: chargeRequest(draft),
    mode,
    ...(draft.provider !== undefined ? { provider: draft.provider } : {}),
    unknownParameters: draft.unknownParameters,
  };
}

/** Routes a draft under `mode` (default: the one it asks for): the candidates, first to try first. */
export function routePlan(ctx: Routing, draft: Draft, mode: RoutingMode = draft.routing): GenerationPlan {
  const { features: _features, provider: _provider, unknownParameters: _unknown, ...plan } = draft;
  const route = routeRequestOf(draft, mode);
  const candidates = routeRequest(
    {
      providers: ctx.catalog.providers,
      offerSupportsSize,
      unavailableReason: (p) => ctx.catalog.unavailableReason(p),
    },
    route,
  );
  // A provider named in the request is the only candidate: when /providers lists it unavailable,
  // the answer is 503 at once rather than a render that is known to fail.
  const named = route.provider !== undefined ? candidates[0] : undefined;
  if (named && ctx.catalog.status(named.provider) === 'unavailable') {
    throw new ApiError(
      'provider_unavailable',
      `provider '${named.provider.slug}' is unavailable (see GET /v1/providers); name another or omit provider to let routing choose`,
    );
  }
  const ranking = routeRequest(
    {
      providers: ctx.catalog.providers,
      offerSupportsSize,
      unavailableReason: (p) => ctx.catalog.unavailableReason(p, { ignoreCooldown: true }),
    },
    route,
  );
  return { ...plan, routing: mode, candidates: candidates.map(planned), ranking: ranking.map(planned) };
}

function promptSeed(prompt: string): number {
  return createHash('sha256').update(prompt).digest().readUInt32BE(0) & 0x7fffffff;
}

/** What the plan keeps of a candidate routing chose: the provider's id and what it drops. */
function planned(candidate: RouteCandidate): PlannedCandidate {
  return { provider: candidate.provider.id, ignoredParameters: [...candidate.ignoredParameters] };
}

/**
 * Planned candidates as the catalog has them now: the provider and its offer of the plan's model.
 * One the catalog no longer has, that no longer offers the model, or that may not be used now (its
 * key removed, switched off) is left out: a plan read back after a restart or by another node
 * routes only to what routing would use now. Cooldowns are the caller's (usableCandidates).
 */
export function candidatesNow(
  ctx: Routing,
  plan: GenerationPlan,
  planned: readonly PlannedCandidate[],
): RouteCandidate[] {
  return planned.flatMap((c) => {
    const provider = ctx.catalog.findProvider(c.provider);
    const offer = provider ? findOffer(provider, plan.model) : undefined;
    if (!provider || !offer || ctx.catalog.unavailableReason(provider, { ignoreCooldown: true }) !== undefined)
      return [];
    return [{ provider, offer, ignoredParameters: c.ignoredParameters }];
  });
}

/** The plan's candidates, less those in a cooldown after repeated failures (health.ts); none → 503. */
export function usableCandidates(ctx: RoutingNow, plan: GenerationPlan): RouteCandidate[] {
  const present = candidatesNow(ctx, plan, plan.candidates);
  if (present.length === 0) {
    const names = plan.candidates.map((c) => c.provider).join(', ');
    throw new ApiError(
      'provider_unavailable',
      `no provider this generation was routed to (${names}) can render ${plan.model} now (see GET /v1/providers)`,
    );
  }
  const candidates = present.filter((c) => !ctx.providerHealth.inCooldown(c.provider.id));
  if (candidates.length === 0) {
    const names = present.map((c) => c.provider.slug).join(', ');
    throw new ApiError(
      'provider_unavailable',
      `every provider for ${plan.model} (${names}) is cooling down after repeated failures (see GET /v1/providers); try again shortly`,
    );
  }
  return candidates;
}

/**
 * USD for one item on this candidate: what shared/api/pricing.ts reads from its price table (or
 * its headline price × seconds of video), so the preview, the charge and routing agree.
 */
export function unitPrice(plan: GenerationPlan, candidate: RouteCandidate): number {
  return chargeOf(plan, candidate).unitUsd;
}

/** The plan's charge on this candidate, with the line of its price table that priced it. */
export function chargeOf(plan: GenerationPlan, candidate: RouteCandidate): Charge {
  // A provider that cannot make the soundtrack the request asks for (dropped under cheapest) makes none.
  const silent = candidate.ignoredParameters.includes('audio');
  const request = chargeRequest(plan);
  return chargeFor(candidate.offer, silent ? { ...request, audio: false } : request);
}

/** What of a plan its price depends on. */
function chargeRequest(
  plan: Pick<
    GenerationPlan,
    'kind' | 'size' | 'width' | 'height' | 'duration' | 'count' | 'pricedAudio' | 'imageUrl' | 'startFrameOf'
  >,
): ChargeRequest {
  return {
    media: plan.kind,
    size: plan.size,
    width: plan.width,
    height: plan.height,
    ...(plan.kind === 'video' ? { duration: plan.duration } : {}),
    count: plan.count,
    audio: plan.pricedAudio,
    startFrame: plan.imageUrl !== undefined || plan.startFrameOf !== undefined,
  };
}
