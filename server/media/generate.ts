import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Feature, GeneratedItem, GenerationResponse, MediaKind, RoutingMode } from '../../shared/api/index.ts';
import { ImageGenerationRequest, VideoGenerationRequest } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/keys.ts';
import type { ServiceContext } from '../context.ts';
import { retentionMs } from '../context.ts';
import { ApiError, rateLimitError } from '../errors.ts';
import { parseOrThrow } from '../errors.ts';
import { TYPICAL_RENDER_SECONDS } from '../limits/concurrency.ts';
import { checkStorageQuota, estimateGenerationBytes } from '../limits/storage-quota.ts';
import { defaultSize, offerSupportsSize, requestFeatures, sizeDimensions } from '../providers/catalog.ts';
import type { ModelDefinition } from '../providers/catalog.ts';
import type { RenderOutput } from '../providers/types.ts';
import { isRenderError } from '../providers/errors.ts';
import type { RouteCandidate } from '../routing/route.ts';
import { routeRequest } from '../routing/route.ts';
import { newMediaId } from '../storage/layout.ts';
import { getMedia, toGeneratedItem } from '../storage/media-repo.ts';
import type { NewMedia } from '../storage/media-repo.ts';
import { transaction } from '../storage/db.ts';
import { fileUrls } from './urls.ts';
import { resolveImageUrl } from './image-source.ts';
import { insertItems, placeItem } from './store.ts';
import { modelParameterValues } from './model-parameters.ts';

/** A validated request, the same shape for both kinds. */
interface Plan {
  kind: MediaKind;
  model: ModelDefinition;
  version: string;
  prompt: string;
  size: string;
  width: number;
  height: number;
  duration: number;
  count: number;
  style?: string;
  imageUrl?: string;
  seed: number;
  public: boolean;
  routing: RoutingMode;
  candidates: RouteCandidate[];
  /**
   * The model's own parameters from the request, validated against the model record, by v1 name
   * (ProviderTask.parameters); a candidate does not receive those in its ignoredParameters.
   */
  parameters: Record<string, unknown>;
  /** `audio: true`: the request asks for a soundtrack (feature `audio`; ProviderTask.audio). */
  audio?: boolean;
}

/** The model parameters a candidate receives: the plan's, less the ones routing dropped for it. */
export function providerParameters(plan: Plan, candidate: RouteCandidate): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(plan.parameters).filter(([name]) => !candidate.ignoredParameters.includes(name)),
  );
}

/** `POST /videos/generations`. */
export function planVideo(ctx: ServiceContext, raw: unknown): Plan {
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
  const unknownParameters = unknownFields(raw, VideoGenerationRequest.shape, model.model);
  return finishPlan(ctx, 'video', model, { ...body, unknownParameters }, duration, 1);
}

/** `POST /images/generations`. */
export function planImage(ctx: ServiceContext, raw: unknown): Plan {
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
  return finishPlan(ctx, 'image', model, { ...body, style, unknownParameters }, 0, n);
}

/** Body fields that are neither the request schema's nor the model's parameters (routing decides their fate). */
function unknownFields(raw: unknown, shape: object, model: ModelDefinition): string[] {
  if (typeof raw !== 'object' || raw === null) return [];
  return Object.keys(raw).filter((k) => !Object.hasOwn(shape, k) && !Object.hasOwn(model.parameters, k));
}

function resolveModel(ctx: ServiceContext, id: string, kind: MediaKind): { model: ModelDefinition; version: string } {
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

function finishPlan(
  ctx: ServiceContext,
  kind: MediaKind,
  resolved: { model: ModelDefinition; version: string },
  body: {
    prompt: string;
    size?: string;
    style?: string;
    image_url?: string;
    seed?: number;
    public: boolean;
    routing: RoutingMode;
    provider?: string;
    unknownParameters: string[];
  },
  duration: number,
  count: number,
): Plan {
  const { model } = resolved;
  const parameters = modelParameterValues(body, model.id, model.parameters);
  const audio = parameters['audio'] === true ? true : undefined;
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
  const candidates = routeRequest(
    {
      providers: ctx.catalog.providers,
      offerSupportsSize,
      unavailableReason: (p) => ctx.catalog.unavailableReason(p),
    },
    {
      media: kind,
      model: model.id,
      size,
      ...(kind === 'video' ? { durationSeconds: duration } : {}),
      features,
      parameters: Object.keys(parameters),
      mode: body.routing,
      provider: body.provider,
      unknownParameters: body.unknownParameters,
    },
  );
  // A provider named in the request is the only candidate: when /providers lists it unavailable,
  // the answer is 503 at once rather than a render that is known to fail.
  const named = body.provider !== undefined ? candidates[0] : undefined;
  if (named && ctx.catalog.status(named.provider) === 'unavailable') {
    throw new ApiError(
      'provider_unavailable',
      `provider '${named.provider.slug}' is unavailable (see GET /v1/providers); name another or omit provider to let routing choose`,
    );
  }
  return {
    kind,
    model,
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
    candidates,
    parameters,
    ...(audio ? { audio } : {}),
  };
}

function promptSeed(prompt: string): number {
  return createHash('sha256').update(prompt).digest().readUInt32BE(0) & 0x7fffffff;
}

/**
 * Runs a planned generation: limits, the start image, the provider with fallbacks, the pipeline,
 * then storage. It is tied to the service's lifetime, not to the HTTP request, so a client that
 * disconnects still gets its item stored and listed.
 */
export async function runGeneration(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  plan: Plan,
  /** Called inside the transaction that commits the items (the idempotency record goes there). */
  commit?: (body: GenerationResponse) => void,
): Promise<GenerationResponse> {
  const started = performance.now();
  // Refused before any work when its estimated size would pass the quota (storage-quota.ts).
  const estimate = estimateGenerationBytes(plan);
  checkStorageQuota({ db: ctx.db, now: ctx.clock.now(), reservations: ctx.reservations }, auth.user, auth.limits, {
    bytes: estimate,
    what: 'This generation (by its estimated size)',
  });
  const limit = auth.limits.concurrency[plan.kind];
  const slot = ctx.concurrency.tryAcquire(auth.user, plan.kind, limit);
  if (!slot) {
    throw rateLimitError(
      `Concurrent ${plan.kind} generations are limited to ${limit} for this account`,
      TYPICAL_RENDER_SECONDS[plan.kind],
    );
  }
  // Checked and taken with no await between, so two requests cannot both pass on the same space.
  const unreserve = ctx.reservations.reserve(auth.user, plan.kind, estimate);
  const release = () => {
    slot();
    unreserve();
  };
  const workDir = await ctx.layout.makeWorkDir('gen').catch((error: unknown) => {
    release();
    throw error;
  });
  const signal = ctx.shutdown;
  const placing: string[] = [];
  let committed = false;
  try {
    // Checked even when the chosen provider will drop it: a bad image_url is a bad request.
    const startImage =
      plan.imageUrl !== undefined ? await resolveImageUrl(ctx, auth.user, plan.imageUrl, workDir, signal) : undefined;
    const setupTime = (performance.now() - started) / 1000;

    const renderStart = performance.now();
    let retries = 0;
    let used: RouteCandidate | null = null;
    let masters: RenderOutput[] = [];
    for (const [index, candidate] of plan.candidates.entries()) {
      try {
        masters = [];
        // Remote providers run through the job runner (core engineer, issue 12); until it is merged, they fail over.
        const provider = candidate.provider;
        if (provider.kind === 'remote') throw new Error(`${provider.slug}: remote generation is not wired in yet`);
        for (let i = 0; i < plan.count; i++) {
          const ignored = candidate.ignoredParameters;
          masters.push(
            await provider.render({
              kind: plan.kind,
              model: `${plan.model.id}:${plan.version}`,
              prompt: plan.prompt,
              seed: (plan.seed + i) % 2 ** 31,
              width: plan.width,
              height: plan.height,
              durationSeconds: plan.duration,
              style: ignored.includes('style') ? undefined : plan.style,
              startImagePath: ignored.includes('image_url') ? undefined : startImage,
              workDir: await subDir(workDir, `render-${index}-${i}`),
              signal,
            }),
          );
        }
        used = candidate;
        break;
      } catch (error) {
        if (signal.aborted) throw new ApiError('provider_unavailable', 'the service is shutting down');
        // Input no provider can use (a start image that does not decode) is the client's error:
        // falling back would only fail again and count as provider retries.
        if (isRenderError(error) && error.code === 'invalid_input')
          throw new ApiError('invalid_request_error', error.message);
        retries++;
        ctx.logger.warn(
          `provider ${candidate.provider.slug} failed (${error instanceof Error ? error.message : String(error)}); trying the next`,
        );
      }
    }
    if (!used) {
      const tried = plan.candidates.map((c) => c.provider.slug).join(', ');
      throw new ApiError('provider_unavailable', `every provider for ${plan.model.id} failed (tried ${tried})`);
    }
    const generationTime = (performance.now() - renderStart) / 1000;

    const processStart = performance.now();
    const now = ctx.clock.now();
    const unitPrice = used.offer.price * (plan.kind === 'video' ? plan.duration : 1);
    const placed: NewMedia[] = [];
    for (const [i, master] of masters.entries()) {
      // One directory per item: the pipeline writes fixed file names.
      const result = await ctx.runPipeline({
        kind: plan.kind,
        master: master.path,
        workDir: await subDir(workDir, `pipeline-${i}`),
        signal,
      });
      crashPoint('rendered');
      const id = newMediaId();
      placing.push(id);
      placed.push(
        await placeItem(ctx, workDir, result.formats, result.thumbnail, {
          id,
          user_id: auth.user,
          key_id: auth.keyId,
          kind: plan.kind,
          model: plan.model.id,
          model_version: plan.version,
          provider_id: used.provider.id,
          provider_slug: used.provider.slug,
          provider_name: used.provider.name,
          prompt: plan.prompt,
          size: plan.size,
          duration: plan.kind === 'video' ? round(result.duration, 3) : 0,
          width: result.width,
          height: result.height,
          price: round(unitPrice, 6),
          public: plan.public ? 1 : 0,
          created_at: now,
          expires_at: now + retentionMs(ctx, auth.limits),
        }),
      );
    }
    crashPoint('placed');
    const processingTime = (performance.now() - processStart) / 1000;
    const urls = fileUrls(ctx, auth.user);
    // Every item, its charge and the idempotency record land together or not at all: a repeat
    // after a crash either finds the first answer, or finds nothing charged and runs again.
    const response = transaction(ctx.db, (): GenerationResponse => {
      insertItems(ctx, placed);
      const data: GeneratedItem[] = placed.flatMap((p) => {
        const row = getMedia(ctx.db, p.id);
        return row ? [toGeneratedItem(row, urls)] : [];
      });
      const body: GenerationResponse = {
        success: true,
        data,
        price: round(unitPrice * masters.length, 6),
        created: Math.floor(now / 1000),
        stats: {
          setupTime: round(setupTime, 3),
          processingTime: round(processingTime, 3),
          generationTime: round(generationTime, 3),
          retries,
          providerId: used.provider.id,
          providerSlug: used.provider.slug,
          routing: plan.routing,
          ignoredParameters: used.ignoredParameters,
        },
      };
      commit?.(body);
      return body;
    });
    committed = true;
    crashPoint('committed');
    return response;
  } finally {
    release();
    await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
    // Items placed but never committed (a later item failed): nothing points at their files.
    if (!committed) {
      for (const id of placing)
        await rm(ctx.layout.mediaPath(id), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/**
 * Test hook: `CLIPDESK_TEST_CRASH_AT=<step>` makes the process SIGKILL itself when a generation
 * reaches that step ('rendered': a master is through the pipeline; 'placed': every item's files are
 * in place, nothing committed; 'committed': items, charges and idempotency record are committed,
 * the answer not yet sent). test/integration/server/idempotency-crash.test.ts kills a standalone
 * service at each to prove a repeated request is answered once and charged once.
 */
function crashPoint(step: 'rendered' | 'placed' | 'committed'): void {
  if (process.env['CLIPDESK_TEST_CRASH_AT'] === step) process.kill(process.pid, 'SIGKILL');
}

async function subDir(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
