import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type {
  Charge,
  ChargeRequest,
  Feature,
  GenerationResponse,
  MediaKind,
  RoutingMode,
} from '../../shared/api/index.ts';
import { chargeFor, ImageGenerationRequest, requestAudio, VideoGenerationRequest } from '../../shared/api/index.ts';
import type { ProbeResult } from '../../shared/node/ffmpeg.ts';
import type { AuthenticatedKey } from '../auth/keys.ts';
import type { ServiceContext } from '../context.ts';
import { retentionMs } from '../context.ts';
import { ApiError, rateLimitError } from '../errors.ts';
import { parseOrThrow } from '../errors.ts';
import { TYPICAL_RENDER_SECONDS } from '../limits/concurrency.ts';
import { estimateGenerationBytes, reserveStorage } from '../limits/storage-quota.ts';
import { SLOT_LEASE_MS } from '../limits/leased-rows.ts';
import { defaultSize, offerSupportsSize, requestFeatures, sizeDimensions } from '../providers/catalog.ts';
import type { ModelDefinition } from '../providers/catalog.ts';
import type { LocalProvider, RemoteProvider } from '../providers/types.ts';
import { isRenderError } from '../providers/errors.ts';
import { isProviderError } from '../providers/remote/contract.ts';
import { sleep } from '../providers/remote/webhooks.ts';
import type { RouteCandidate, RouteRequest } from '../routing/route.ts';
import { routeRequest } from '../routing/route.ts';
import { deleteProviderJob } from '../storage/provider-jobs.ts';
import type { ProviderJobRow } from '../storage/provider-jobs.ts';
import { finishGeneration } from './finish.ts';
import type { StepReport } from './finish.ts';
import type { RecordResult } from './idempotency.ts';
import { firstFrameOf, resolveImageUrl } from './image-source.ts';
import { getMedia } from '../storage/media-repo.ts';
import type { Db } from '../storage/db.ts';
import { modelParameterValues } from './model-parameters.ts';
import { leftToAnother } from './lease.ts';
import { aspectRatio, dropProviderJobs, failedAfterSubmit, runRemoteAttempt, startImageFile } from './remote-job.ts';
import type { RemoteOutcome } from './remote-job.ts';

/** What commits with the items: an idempotency record (whose key a remote job keeps) or any other. */
export type Commit = RecordResult<GenerationResponse> | ((body: GenerationResponse, tx: Db) => Promise<void>);

/** How an asynchronous generation follows and stops its run (a synchronous one passes none). */
export interface RunOptions {
  /** Aborts the run (a cancel); default the service's lifetime. Must include ctx.shutdown. */
  signal?: AbortSignal;
  step?: StepReport;
  /** The generations row: a remote job's provider_jobs row names it, for the resume after a restart. */
  generationId?: string;
  /** A concurrency slot already taken (an asynchronous generation waited for it); released here. */
  slot?: () => void;
  /** A storage reservation already held (a synchronous request's, slot-handoff.ts); released here. */
  reservation?: () => void;
  /**
   * The plan was made just now (planFor, which reads the nodes' shared provider health), with
   * nothing waited for since: the run routes on that read rather than reading the table again, so
   * a generation reads it once (PostgreSQL). Unset (or after a wait for a concurrency slot), the run
   * reads it first, so that a cooldown another node started meanwhile counts.
   */
  healthReadForPlan?: boolean;
  /**
   * The provider jobs a previous run of this generation had submitted (remote video variations:
   * one per item, docs/providers.md): each is polled as its item, on the same provider, never
   * submitted again; only the items without one are submitted.
   */
  resume?: ProviderJobRow[];
}

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
   * The providers ahead of each candidate had none been cooling down (routing order): those passed
   * over for their cooldown count in stats.retries (docs/api.md).
   */
  ranking: RouteCandidate[];
  /**
   * The model's own parameters from the request, validated against the model record, by v1 name
   * (ProviderTask.parameters); a candidate does not receive those in its ignoredParameters.
   */
  parameters: Record<string, unknown>;
  /** `audio: true`: the request asks for a soundtrack (feature `audio`; ProviderTask.audio). */
  audio?: boolean;
  /** POST /videos/variations: the source item's id, recorded on each new item. */
  variationOf?: string;
  /** POST /videos/variations: the source item whose first frame is the start image. */
  startFrameOf?: string;
}

/** Exported for the variations planner (it plans a video request of its own). */
export type { Plan };

/** The model parameters a candidate receives: the plan's, less the ones routing dropped for it. */
export function providerParameters(plan: Plan, candidate: RouteCandidate): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(plan.parameters).filter(([name]) => !candidate.ignoredParameters.includes(name)),
  );
}

/** `POST /videos/generations`. */
export function planVideo(ctx: ServiceContext, raw: unknown): Plan {
  return routePlan(ctx, draftVideo(ctx, raw));
}

/** `POST /images/generations`. */
export function planImage(ctx: ServiceContext, raw: unknown): Plan {
  return routePlan(ctx, draftImage(ctx, raw));
}

/**
 * A validated request before routing: everything but the candidates, and what routing is asked.
 * The routing preview (server/generation/routing-preview.ts) routes one draft under every mode, so a body
 * that is wrong whatever the mode is refused as the generation would refuse it.
 */
export type Draft = Omit<Plan, 'candidates' | 'ranking'> & { route: RouteRequest };

/** A `POST /videos/generations` body, validated (its 400s), not routed. */
export function draftVideo(ctx: ServiceContext, raw: unknown): Draft {
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
  return draftPlan(ctx, 'video', model, { ...body, unknownParameters }, duration, 1);
}

/** A `POST /images/generations` body, validated (its 400s), not routed. */
export function draftImage(ctx: ServiceContext, raw: unknown): Draft {
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

export function resolveModel(
  ctx: ServiceContext,
  id: string,
  kind: MediaKind,
): { model: ModelDefinition; version: string } {
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

export function finishPlan(...args: Parameters<typeof draftPlan>): Plan {
  return routePlan(args[0], draftPlan(...args));
}

function draftPlan(
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
): Draft {
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
  const route: RouteRequest = {
    media: kind,
    model: model.id,
    size,
    ...(kind === 'video' ? { durationSeconds: duration } : {}),
    features,
    parameters: Object.keys(parameters),
    charge: chargeRequest({ kind, model, size, ...dims, duration, count, parameters }),
    mode: body.routing,
    ...(body.provider !== undefined ? { provider: body.provider } : {}),
    unknownParameters: body.unknownParameters,
  };
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
    route,
    parameters,
    ...(audio ? { audio } : {}),
  };
}

/** Routes a draft under `mode` (default: the one it asks for): the candidates, first to try first. */
export function routePlan(ctx: ServiceContext, draft: Draft, mode: RoutingMode = draft.routing): Plan {
  const { route, ...plan } = draft;
  const candidates = routeRequest(
    {
      providers: ctx.catalog.providers,
      offerSupportsSize,
      unavailableReason: (p) => ctx.catalog.unavailableReason(p),
    },
    { ...route, mode },
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
    { ...route, mode },
  );
  return { ...plan, routing: mode, candidates, ranking };
}

function promptSeed(prompt: string): number {
  return createHash('sha256').update(prompt).digest().readUInt32BE(0) & 0x7fffffff;
}

/**
 * Runs a planned generation: limits, the start image, the provider with fallbacks, the pipeline,
 * then storage. `run.signal` stops it (an asynchronous generation's cancel, a synchronous
 * request's client hanging up); by default it is tied to the service's lifetime.
 */
export async function runGeneration(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  plan: Plan,
  /**
   * Called inside the transaction that commits the items (the idempotency record goes there; an
   * asynchronous generation's result too, and its refusal to commit once canceled).
   */
  commit?: Commit,
  run: RunOptions = {},
): Promise<GenerationResponse> {
  const started = performance.now();
  // A cooldown another node started since the plan (or while an asynchronous one waited) counts.
  if (run.healthReadForPlan !== true) await ctx.providerHealth.refresh();
  const candidates = usableCandidates(ctx, plan);
  // Refused before any work when its estimated size would pass the quota (storage-quota.ts); the
  // check and the reservation are one step in the database, so no two requests, on any node, both
  // pass on the same space.
  const unreserve = run.reservation ?? (await reserveFor(ctx, auth, plan));
  const slot = await (async () => {
    const limit = auth.limits.concurrency[plan.kind];
    const taken = run.slot ?? (await ctx.concurrency.tryAcquire(auth.user, plan.kind, limit));
    if (!taken) throw concurrencyLimitError(plan.kind, limit);
    return taken;
  })().catch((error: unknown) => {
    unreserve();
    throw error;
  });
  const release = () => {
    slot();
    unreserve();
  };
  const workDir = await ctx.layout.makeWorkDir('gen').catch((error: unknown) => {
    release();
    throw error;
  });
  const signal = run.signal ?? ctx.shutdown;
  try {
    // Checked even when the chosen provider will drop it: a bad image_url is a bad request.
    const startImage = await startImageFor(ctx, auth, plan, workDir, signal);
    const setupTime = (performance.now() - started) / 1000;

    const renderStart = performance.now();
    const resumed = await resumedItems(ctx, run.resume ?? [], candidates);
    const rendered = await renderWithFallback(ctx, auth, plan, candidates, {
      startImage,
      workDir,
      setupTime,
      commit,
      signal,
      run,
      resumed,
    }).finally(async () => {
      // Jobs of a provider the run left before polling them: not paid for.
      if (resumed && !leftToAnother(ctx, signal)) {
        await dropProviderJobs(ctx, [...resumed.items.values()]);
        resumed.items.clear();
      }
    });
    const generationTime = (performance.now() - renderStart) / 1000;
    const { candidate, masters } = rendered;
    const provider = candidate.provider;
    return await finishGeneration(
      ctx,
      {
        user: auth.user,
        keyId: auth.keyId,
        kind: plan.kind,
        model: plan.model.id,
        version: plan.version,
        prompt: plan.prompt,
        size: plan.size,
        public: plan.public,
        routing: plan.routing,
        retentionMs: retentionMs(ctx, auth.limits),
        provider: { id: provider.id, slug: provider.slug, name: provider.name },
        ignoredParameters: candidate.ignoredParameters,
        // A provider that reports what it charged is charged on; otherwise the catalog price.
        unitPrice: rendered.cost !== undefined ? rendered.cost / masters.length : unitPrice(plan, candidate),
        masters,
        retries: rendered.retries,
        setupTime,
        generationTime,
        ...(rendered.providerJobs ? { providerJobs: rendered.providerJobs } : {}),
        ...(commit ? { commit } : {}),
        ...(plan.variationOf !== undefined ? { variationOf: plan.variationOf } : {}),
        ...(run.step ? { step: run.step } : {}),
      },
      workDir,
      signal,
    ).catch(async (error: unknown) => {
      // The provider's job is over either way: a restart must not resume (and charge) it. Unless
      // the work goes on elsewhere (a restart, another node that took the generation over).
      if (!leftToAnother(ctx, signal, error))
        for (const job of rendered.providerJobs ?? []) await deleteProviderJob(ctx.db, job);
      throw error;
    });
  } finally {
    // The slot first: the next generation need not wait for the clean-up. The removal is retried,
    // since a process killed a moment ago may still be closing a file in it (ENOTEMPTY).
    release();
    await rm(workDir, { recursive: true, force: true, maxRetries: 5 }).catch((error: unknown) =>
      ctx.logger.warn(`could not remove the work directory ${workDir}: ${describe(error)}`),
    );
  }
}

/** The items a previous run had submitted, by item index, at the provider they were submitted to. */
interface ResumedItems {
  providerId: string;
  /** Taken out as each is polled (or its provider given up), so a retry never polls one twice. */
  items: Map<number, ProviderJobRow>;
}

/**
 * Sorts a previous run's jobs: those of its last provider, still usable, are polled as their items;
 * any other (another provider's, or a row that does not name its item) is canceled at once.
 */
async function resumedItems(
  ctx: ServiceContext,
  rows: ProviderJobRow[],
  candidates: RouteCandidate[],
): Promise<ResumedItems | undefined> {
  const providerId = rows.at(-1)?.providerId;
  const usable = candidates.some((c) => c.provider.id === providerId);
  const items = new Map<number, ProviderJobRow>();
  const dropped: ProviderJobRow[] = [];
  for (const row of rows) {
    if (usable && row.providerId === providerId && row.plan.item !== undefined && !items.has(row.plan.item))
      items.set(row.plan.item, row);
    else dropped.push(row);
  }
  await dropProviderJobs(ctx, dropped);
  return providerId !== undefined && items.size > 0 ? { providerId, items } : undefined;
}

/** Reserves the plan's estimated size against the account's storage quota, or throws its 429. */
export function reserveFor(ctx: ServiceContext, auth: AuthenticatedKey, plan: Plan): Promise<() => void> {
  return reserveStorage(
    { db: ctx.db, now: ctx.clock.now(), reservations: ctx.reservations },
    auth.user,
    auth.limits,
    { bytes: estimateGenerationBytes(plan), kind: plan.kind, what: 'This generation (by its estimated size)' },
    (error) =>
      ctx.logger.warn(
        `could not release a storage reservation yet (retrying; it is no longer renewed, so it frees within ${SLOT_LEASE_MS / 1000} s at the latest): ${String(error)}`,
      ),
  );
}

/** A synchronous request when the account's slots of its kind are all taken: 429, never a wait. */
export function concurrencyLimitError(kind: MediaKind, limit: number): ApiError {
  return rateLimitError(
    `Concurrent ${kind} generations are limited to ${limit} for this account`,
    TYPICAL_RENDER_SECONDS[kind],
  );
}

/** The plan's candidates less those in a cooldown after repeated failures (health.ts); none → 503. */
export function usableCandidates(ctx: ServiceContext, plan: Plan): RouteCandidate[] {
  const candidates = plan.candidates.filter((c) => !ctx.providerHealth.inCooldown(c.provider.id));
  if (candidates.length === 0) {
    const names = plan.candidates.map((c) => c.provider.slug).join(', ');
    throw new ApiError(
      'provider_unavailable',
      `every provider for ${plan.model.id} (${names}) is cooling down after repeated failures (see GET /v1/providers); try again shortly`,
    );
  }
  return candidates;
}

async function startImageFor(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  plan: Plan,
  workDir: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (plan.startFrameOf !== undefined) {
    const source = await getMedia(ctx.db, plan.startFrameOf);
    // Deleted since the request was planned (or not the caller's): the variation cannot start.
    if (!source || source.user_id !== auth.user)
      throw new ApiError('not_found_error', `media ${plan.startFrameOf} does not exist any more`);
    return firstFrameOf(ctx, source, workDir, signal);
  }
  return plan.imageUrl !== undefined ? resolveImageUrl(ctx, auth.user, plan.imageUrl, workDir, signal) : undefined;
}

/**
 * USD for one item on this candidate: what shared/api/pricing.ts reads from its price table (or
 * its headline price × seconds of video), so the preview, the charge and routing agree.
 */
export function unitPrice(plan: Plan, candidate: RouteCandidate): number {
  return chargeOf(plan, candidate).unitUsd;
}

/** The plan's charge on this candidate, with the line of its price table that priced it. */
export function chargeOf(plan: Plan, candidate: RouteCandidate): Charge {
  // A provider that cannot make the soundtrack the request asks for (dropped under cheapest) makes none.
  const silent = candidate.ignoredParameters.includes('audio');
  const request = chargeRequest(plan);
  return chargeFor(candidate.offer, silent ? { ...request, audio: false } : request);
}

/** What of a plan its price depends on; sound as asked, else the model's default (docs/providers.md, "Prices"). */
function chargeRequest(
  plan: Pick<Plan, 'kind' | 'model' | 'size' | 'width' | 'height' | 'duration' | 'count' | 'parameters'>,
): ChargeRequest {
  return {
    media: plan.kind,
    size: plan.size,
    width: plan.width,
    height: plan.height,
    ...(plan.kind === 'video' ? { duration: plan.duration } : {}),
    count: plan.count,
    audio: requestAudio(plan.parameters['audio'], plan.model.parameters['audio'] as { default?: unknown } | undefined),
  };
}

interface Rendered {
  candidate: RouteCandidate;
  masters: Array<{ path: string; probed?: ProbeResult }>;
  retries: number;
  cost?: number;
  /** provider_jobs rows: one, or one per item for video variations (a video job makes one video). */
  providerJobs?: string[];
}

/**
 * Tries the candidates in routing order (`candidates`: the plan's, less those cooling down). What a
 * failure leads to (docs/providers.md, "How provider jobs run"):
 * a refused key marks the provider unhealthy and falls back; a 429 is waited out once when its
 * Retry-After is short, else falls back; a 5xx is retried once, then falls back; a timeout (the
 * runner has canceled the job) and a malformed or failed job fall back; a content-policy refusal
 * is the client's 422 and an input the provider refuses its 400, with no fallback.
 */
async function renderWithFallback(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  plan: Plan,
  candidates: RouteCandidate[],
  at: {
    startImage: string | undefined;
    workDir: string;
    setupTime: number;
    commit: Commit | undefined;
    signal: AbortSignal;
    run: RunOptions;
    resumed: ResumedItems | undefined;
  },
): Promise<Rendered> {
  const signal = at.signal;
  let retries = 0;
  const failures: string[] = [];
  const order = inRankingOrder(ctx, plan, candidates);
  // The provider that has the previous run's jobs goes first: they are polled, not paid for again.
  const first = order.findIndex((c) => c !== 'cooling' && c.provider.id === at.resumed?.providerId);
  if (first > 0) order.unshift(...order.splice(first, 1));
  for (const [index, candidate] of order.entries()) {
    // Passed over for its cooldown (it failed just before): a fallback like a failure now, so it
    // counts in stats.retries as a local provider that fails every time does (docs/api.md).
    if (candidate === 'cooling') {
      retries++;
      continue;
    }
    const provider = candidate.provider;
    for (let attempt = 0; ; attempt++) {
      try {
        const dir = await subDir(at.workDir, `render-${index}-${attempt}`);
        if (provider.kind !== 'remote') {
          // A remote job stays `queued` until its provider reports it running (runRemoteAttempt).
          at.run.step?.('generating');
          const masters = await renderLocal(plan, candidate, provider, at.startImage, dir, signal);
          return { candidate, masters, retries };
        }
        const outcome = await renderRemoteItems(ctx, auth, plan, candidate, provider, { ...at, dir, retries });
        await ctx.providerHealth.success(provider.id);
        return { candidate, retries, ...outcome };
      } catch (error) {
        if (ctx.shutdown.aborted) throw new ApiError('provider_unavailable', 'the service is shutting down');
        if (signal.aborted) throw new ApiError('invalid_request_error', 'the generation was canceled');
        // Input no provider can use (a start image that does not decode) is the client's error:
        // falling back would only fail again and count as provider retries.
        if (isRenderError(error) && error.code === 'invalid_input')
          throw new ApiError('invalid_request_error', error.message);
        if (!isProviderError(error)) {
          retries++;
          failures.push(`${provider.slug}: ${describe(error)}`);
          ctx.logger.warn(`provider ${provider.slug} failed (${describe(error)}); trying the next`);
          break;
        }
        // Written before anything else is tried or answered: the next request may go to another node.
        await ctx.providerHealth.failure(provider.id, error);
        if (error.errorClass === 'content_policy') {
          throw new ApiError('content_policy_violation', error.message, { provider: provider.id });
        }
        if (error.errorClass === 'invalid_input') throw new ApiError('invalid_request_error', error.message);
        retries++;
        const wait = error.retryAfterSeconds ?? 1;
        // Retries ask for a new job: only when the provider turned the request away, never once
        // it had accepted a job (that one may still run, and be paid for).
        const retry = attempt === 0 && !failedAfterSubmit(error);
        if (retry && error.errorClass === 'rate_limited' && wait <= ctx.remote.maxRateLimitWaitSeconds) {
          ctx.logger.warn(`${provider.name} is rate limited; waiting ${wait} s (its Retry-After) before asking again`);
          await sleep(wait * 1000, signal).catch(() => undefined);
          continue;
        }
        if (retry && error.errorClass === 'server') {
          ctx.logger.warn(`${error.message}; retrying ${provider.name} once`);
          continue;
        }
        failures.push(error.message);
        ctx.logger.warn(`${error.message} (${error.errorClass}); trying the next provider`);
        break;
      }
    }
  }
  const tried = candidates.map((c) => c.provider.slug).join(', ');
  throw new ApiError(
    'provider_unavailable',
    `every provider for ${plan.model.id} failed (tried ${tried})${failures.length > 0 ? `: ${failures.join('; ')}` : ''}`,
  );
}

/** The usable candidates in routing order, with 'cooling' where a provider in its cooldown would rank. */
function inRankingOrder(
  ctx: ServiceContext,
  plan: Plan,
  candidates: RouteCandidate[],
): Array<RouteCandidate | 'cooling'> {
  const usable = new Map(candidates.map((c) => [c.provider.id, c]));
  const order: Array<RouteCandidate | 'cooling'> = [];
  for (const ranked of plan.ranking) {
    const candidate = usable.get(ranked.provider.id);
    if (candidate) {
      order.push(candidate);
      usable.delete(ranked.provider.id);
    } else if (ctx.providerHealth.inCooldown(ranked.provider.id)) order.push('cooling');
  }
  return [...order, ...usable.values()];
}

async function renderLocal(
  plan: Plan,
  candidate: RouteCandidate,
  provider: LocalProvider,
  startImage: string | undefined,
  dir: string,
  signal: AbortSignal,
): Promise<Array<{ path: string }>> {
  const masters: Array<{ path: string }> = [];
  const ignored = candidate.ignoredParameters;
  for (let i = 0; i < plan.count; i++) {
    const out = await provider.render({
      kind: plan.kind,
      model: `${plan.model.id}:${plan.version}`,
      prompt: plan.prompt,
      seed: (plan.seed + i) % 2 ** 31,
      width: plan.width,
      height: plan.height,
      durationSeconds: plan.duration,
      style: ignored.includes('style') ? undefined : plan.style,
      startImagePath: ignored.includes('image_url') ? undefined : startImage,
      workDir: await subDir(dir, `item-${i}`),
      signal,
    });
    masters.push({ path: out.path });
  }
  return masters;
}

/**
 * A remote video job makes one video: n variations are n jobs, one after the other, seeds seed + i.
 * An item whose job a previous run submitted (`at.resumed`) polls that job instead of submitting.
 * Should one fail, the jobs before it are over too (their rows go; nothing was committed).
 */
async function renderRemoteItems(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  plan: Plan,
  candidate: RouteCandidate,
  provider: RemoteProvider,
  at: Parameters<typeof renderRemote>[5] & { resumed: ResumedItems | undefined },
): Promise<{ masters: Rendered['masters']; providerJobs: string[]; cost?: number }> {
  const jobs = plan.kind === 'video' ? plan.count : 1;
  const outcomes: RemoteOutcome[] = [];
  const resumed = at.resumed?.providerId === provider.id ? at.resumed.items : undefined;
  try {
    for (let i = 0; i < jobs; i++) {
      const one = jobs === 1 ? plan : { ...plan, count: 1, seed: (plan.seed + i) % 2 ** 31 };
      const dir = jobs === 1 ? at.dir : await subDir(at.dir, `item-${i}`);
      // Once the first item is generating the generation is: a later job's queue is part of it.
      const step = at.run.step;
      const run: RunOptions =
        i === 0 || !step
          ? at.run
          : { ...at.run, step: (status, report) => step(status === 'queued' ? 'generating' : status, report) };
      const resume = resumed?.get(i);
      resumed?.delete(i);
      const item = jobs === 1 ? {} : { item: i, ...(resume ? { resume } : {}) };
      outcomes.push(await renderRemote(ctx, auth, one, candidate, provider, { ...at, dir, run, ...item }));
    }
  } catch (error) {
    if (!leftToAnother(ctx, at.signal, error)) {
      for (const o of outcomes) if (o.providerJob !== undefined) await deleteProviderJob(ctx.db, o.providerJob);
      // The previous run's jobs of the items not reached: over too.
      if (resumed) await dropProviderJobs(ctx, [...resumed.values()]);
      resumed?.clear();
    }
    throw error;
  }
  const costs = outcomes.map((o) => o.cost);
  return {
    masters: outcomes.flatMap((o) => o.masters),
    providerJobs: outcomes.flatMap((o) => (o.providerJob === undefined ? [] : [o.providerJob])),
    ...(costs.every((c) => c !== undefined) ? { cost: costs.reduce((a, b) => a + b, 0) } : {}),
  };
}

async function renderRemote(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  plan: Plan,
  candidate: RouteCandidate,
  provider: RemoteProvider,
  at: {
    startImage: string | undefined;
    dir: string;
    setupTime: number;
    retries: number;
    commit?: Commit;
    signal: AbortSignal;
    run: RunOptions;
    /** Which item of several jobs this one is (recorded with the job), and its previous run's job. */
    item?: number;
    resume?: ProviderJobRow;
  },
): Promise<RemoteOutcome> {
  const ignored = candidate.ignoredParameters;
  const startImage =
    at.startImage !== undefined && !ignored.includes('image_url') ? await startImageFile(at.startImage) : undefined;
  return runRemoteAttempt(ctx, {
    provider,
    offer: candidate.offer,
    task: {
      kind: plan.kind,
      modelId: `${plan.model.id}:${plan.version}`,
      prompt: plan.prompt,
      size: plan.size,
      width: plan.width,
      height: plan.height,
      aspectRatio: aspectRatio(plan.width, plan.height),
      durationSeconds: plan.kind === 'video' ? plan.duration : 0,
      count: plan.kind === 'video' ? 1 : plan.count,
      seed: ignored.includes('seed') ? undefined : plan.seed,
      ...(plan.style !== undefined && !ignored.includes('style') ? { style: plan.style } : {}),
      ...(startImage ? { startImage } : {}),
      // A silent request says so to a provider that makes sound by default (and charges for it).
      ...(plan.audio === true && !ignored.includes('audio') ? { audio: true } : {}),
      ...(plan.parameters['audio'] === false && candidate.offer.features.includes('audio') ? { audio: false } : {}),
      parameters: providerParameters(plan, candidate),
    },
    plan: {
      user: auth.user,
      keyId: auth.keyId,
      kind: plan.kind,
      model: plan.model.id,
      version: plan.version,
      prompt: plan.prompt,
      size: plan.size,
      width: plan.width,
      height: plan.height,
      duration: plan.duration,
      count: plan.count,
      public: plan.public,
      routing: plan.routing,
      ignoredParameters: ignored,
      unitPrice: unitPrice(plan, candidate),
      retentionMs: retentionMs(ctx, auth.limits),
      retries: at.retries,
      setupTime: at.setupTime,
      ...(at.item !== undefined ? { item: at.item } : {}),
    },
    ...(at.commit && 'key' in at.commit
      ? { idempotency: { key: at.commit.key, fingerprint: at.commit.fingerprint } }
      : {}),
    workDir: at.dir,
    signal: at.signal,
    ...(at.resume ? { resume: at.resume } : {}),
    ...(at.run.generationId !== undefined ? { generationId: at.run.generationId } : {}),
    ...(at.run.step
      ? {
          onStatus: (status: { status: string; position?: number; progress?: number }) => {
            if (status.status === 'queued') at.run.step?.('queued', { queuePosition: status.position });
            else if (status.status === 'running') at.run.step?.('generating', { progress: status.progress });
          },
        }
      : {}),
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function subDir(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  return dir;
}
