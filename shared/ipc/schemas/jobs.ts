import { z } from 'zod';
import { INTERFACE_PARAMETERS } from '../../api/model-records.ts';
import { END_IMAGE_PARAMETER } from '../../api/model-parameters.ts';
import {
  GenerationStatus,
  ImageGenerationRequest,
  RoutingMode,
  VideoGenerationRequest,
} from '../../api/generations.ts';
import { MediaKind } from '../../api/media.ts';
import { promptProblem } from '../../api/spec-rules.ts';

export const JOB_STATES = ['queued', 'uploading', 'generating', 'downloading', 'done', 'failed', 'canceled'] as const;
export const JobState = z.enum(JOB_STATES);
export type JobState = z.infer<typeof JobState>;

/**
 * The start frame of an image-to-video job.
 * - `path`: a local file (Electron: from a drop via webUtils.getPathForFile, or an exported frame);
 *   main uploads it as the job's first step.
 * - `upload`: bytes already uploaded with uploads.fromBytes / uploads.fromPath.
 * - `item`: a library item (its URL, or its downloaded file).
 * - `url`: any URL the service can fetch.
 */
export const StartFrame = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('path'), path: z.string().min(1).max(4096) }),
  z.object({ kind: z.literal('upload'), mediaId: z.string().min(1).max(200), url: z.string().min(1).max(4096) }),
  z.object({ kind: z.literal('item'), itemId: z.string().min(1).max(200) }),
  z.object({ kind: z.literal('url'), url: z.string().min(1).max(4096) }),
]);
export type StartFrame = z.infer<typeof StartFrame>;

/**
 * Names a model's own parameter may not have in `parameters`: the v1 request's fields, the
 * interface's parameters and the app's own fields (`aspect_ratio` travels on its own), so a value
 * there can never stand in for one of them.
 */
export const RESERVED_PARAMETER_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(VideoGenerationRequest.shape),
  ...Object.keys(ImageGenerationRequest.shape),
  ...INTERFACE_PARAMETERS,
  ...['aspect_ratio', 'kind', 'startFrame', 'endFrame', 'variationOf', 'variations', 'parentItemId', 'parameters'],
  // The end frame travels as `endFrame`, given as a start frame is; its URL goes under this name (main or the queue writes it).
  END_IMAGE_PARAMETER,
]);
const MAX_MODEL_PARAMETERS = 64;

/** Whether `name` can be one of a model's own parameters in a job (the shape of the providers' names). */
export function isModelParameterName(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) && !RESERVED_PARAMETER_NAMES.has(name);
}

/**
 * The model's own parameters a job carries (Compose → "More settings"), by the model's names: only
 * their shape is checked here; the model's rules are checked by the renderer before submit and
 * again by the service (shared/api/model-parameters.ts), whose 400 names the rule.
 */
export const ModelParameterValues = z
  .record(z.string(), z.union([z.string().max(10_000), z.number(), z.boolean()]))
  .superRefine((values, ctx) => {
    const names = Object.keys(values);
    if (names.length > MAX_MODEL_PARAMETERS)
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_MODEL_PARAMETERS} model parameters` });
    for (const name of names.filter((n) => !isModelParameterName(n)))
      ctx.addIssue({ code: 'custom', path: [name], message: `${name} cannot be a model parameter` });
  });
export type ModelParameterValues = z.infer<typeof ModelParameterValues>;

/**
 * What the creator asked for: the v1 generation request (its fields and their rules come from
 * shared/api, so the two cannot drift) plus the app's own fields: `kind` (which endpoint),
 * `startFrame` (how the start image is given) and `aspect_ratio` (a model parameter the v1 schema
 * passes through). One schema for both kinds, so the prompt's limit depends on `kind` below.
 */
export const JobRequest = z
  .object(VideoGenerationRequest.shape)
  .pick({
    model: true,
    provider: true,
    routing: true,
    public: true,
    seed: true,
    size: true,
    duration: true,
    style: true,
  })
  .extend({
    kind: MediaKind,
    prompt: z.string().trim().min(1, 'prompt is required'),
    aspect_ratio: z.string().trim().min(1).max(20).optional(),
    /** The model's own parameters (Compose → "More settings"); sent as fields of the v1 request. */
    parameters: ModelParameterValues.optional(),
    startFrame: StartFrame.optional(),
    /**
     * The end frame, given as a start frame is, for a model with an image parameter (docs/workflows.md,
     * "The prompt dock"): sent as the v1 request's `end_image_url` (docs/api.md, "Model parameters").
     */
    endFrame: StartFrame.optional(),
    /** Variations of this library video through `POST /videos/variations`. (docs/workflows.md) */
    variationOf: z.string().min(1).max(200).optional(),
    /** How many variations (1–4) the one generation makes; only with `variationOf`. */
    variations: z.number().int().min(1).max(4).optional(),
    /**
     * docs/workflows.md, shot chains: the library item this shot continues ("Continue this shot": its last
     * frame is the start frame). The result joins that item's chain, after it.
     */
    parentItemId: z.string().min(1).max(200).optional(),
  })
  .superRefine((r, ctx) => {
    if (r.variationOf && r.kind !== 'video') {
      ctx.addIssue({ code: 'custom', path: ['variationOf'], message: 'variations are made of videos' });
    }
    if (r.variations !== undefined && !r.variationOf) {
      ctx.addIssue({ code: 'custom', path: ['variations'], message: 'variations needs variationOf' });
    }
    // Code points, as the service and the renderer count them (one validator: spec-rules.ts).
    const promptError = promptProblem(r.prompt, r.kind);
    if (promptError && r.prompt.length > 0) ctx.addIssue({ code: 'custom', path: ['prompt'], message: promptError });
    if (r.kind === 'image' && r.startFrame) {
      ctx.addIssue({ code: 'custom', path: ['startFrame'], message: 'a start frame is only for video' });
    }
    // The service refuses it too (an end frame closes an image-to-video clip): said here first.
    if (r.endFrame && (r.kind === 'image' || !r.startFrame)) {
      ctx.addIssue({ code: 'custom', path: ['endFrame'], message: 'an end frame needs a start frame (video)' });
    }
  });
export type JobRequest = z.infer<typeof JobRequest>;
export type JobRequestInput = z.input<typeof JobRequest>;

/** A wait before something is tried again (docs/architecture.md, "One retry budget"): why, what, until when (ISO). */
export const RetryWait = z.object({
  /** `retry`: a failed try is tried again after a backoff; `rate_limit`/`rate_window`: the service's limits. */
  reason: z.enum(['retry', 'rate_limit', 'rate_window']).optional(),
  what: z.string(),
  until: z.string(),
  message: z.string().optional(),
});
export type RetryWait = z.infer<typeof RetryWait>;

export const TransferProgress = z.object({
  done: z.number().nonnegative(),
  total: z.number().nonnegative().nullable(),
  /** Set while a broken transfer waits to be tried again. */
  wait: RetryWait.nullable().optional(),
});
export type TransferProgress = z.infer<typeof TransferProgress>;

export const Job = z.object({
  id: z.string(),
  state: JobState,
  request: JobRequest,
  /** ISO 8601. */
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  /** 0-based place among queued jobs; null once it has left the queue. */
  position: z.number().int().nonnegative().nullable(),
  /** Set while the job waits on the rate limit: ISO time it will try again. */
  waitingUntil: z.string().nullable(),
  attempts: z.number().int().nonnegative(),
  upload: TransferProgress.nullable(),
  download: TransferProgress.nullable(),
  /**
   * Asynchronous mode (docs/workflows.md): the service's generation id, its real step and the provider's
   * queue position from the last poll. Absent on a service without async mode.
   */
  generation: z
    .object({
      id: z.string(),
      step: GenerationStatus,
      queuePosition: z.number().int().nonnegative().nullable(),
      progress: z.number().min(0).max(1).nullable(),
      /** The client waits to send a request again (a 429's Retry-After, a backoff): what, and until when (ISO). */
      wait: RetryWait.nullable().optional(),
    })
    .nullable()
    .optional(),
  /**
   * docs/workflows.md: where routing sends it and what it costs, from `POST /routing/preview` at submit
   * (the row of the request's routing mode), then from the generation's response. Null when not
   * known yet (e.g. composed offline).
   */
  route: z
    .object({
      routing: RoutingMode,
      providerId: z.string().nullable(),
      providerName: z.string().nullable(),
      /** USD for this job (all its items). */
      price: z.number().nonnegative().nullable(),
      /** Request parameters routing drops for it (`image_url` is the start frame). */
      dropped: z.array(z.string()),
    })
    .nullable()
    .optional(),
  /**
   * docs/workflows.md: why a queued job does not start yet, said in the queue: over a spending cap
   * (`budget`), the service unreachable (`offline`: "Waiting for the service"), scheduled for a
   * time (`scheduled`, until = that time) or every slot busy (`slot`, until = the estimate).
   */
  hold: z
    .object({
      reason: z.enum(['budget', 'offline', 'scheduled', 'slot']),
      message: z.string(),
      /** ISO time the hold is expected to end, when known. */
      until: z.string().nullable(),
    })
    .nullable()
    .optional(),
  /** The service's message on failure; the inputs stay in `request` for retry. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  result: z
    .object({
      itemIds: z.array(z.string()),
      price: z.number().nullable(),
      /** Files written by the download step. */
      paths: z.array(z.string()),
    })
    .nullable(),
});
export type Job = z.infer<typeof Job>;
/** Where routing sends a job and what it costs (the app's core keeps it on its jobs too). */
export type JobRoute = NonNullable<Job['route']>;

export const QueueStats = z.object({
  paused: z.boolean(),
  queued: z.number().int().nonnegative(),
  running: z.object({ video: z.number().int().nonnegative(), image: z.number().int().nonnegative() }),
  limit: z.object({ video: z.number().int().nonnegative(), image: z.number().int().nonnegative() }),
  /**
   * ms until the next slot frees for `nextSlotKind` (the kind the queue waits for; with no such
   * kind, the sooner of the two); 0 when one is free now, null when unknown.
   */
  nextSlotInMs: z.number().nonnegative().nullable(),
  /** Which kind `nextSlotInMs` describes; null when a slot of each kind is free. (docs/workflows.md) */
  nextSlotKind: MediaKind.nullable().optional(),
  /** The same estimate per kind (the rate window included). (docs/workflows.md) */
  nextSlotInMsByKind: z
    .object({ video: z.number().nonnegative().nullable(), image: z.number().nonnegative().nullable() })
    .optional(),
  /** Set while the service is unreachable: ms until the queue asks it again. (docs/workflows.md) */
  offline: z.object({ nextTryInMs: z.number().nonnegative() }).nullable().optional(),
});
export type QueueStats = z.infer<typeof QueueStats>;

export const JobId = z.object({ id: z.string().min(1).max(200) });
export const JobsListInput = z
  .object({ states: z.array(JobState).optional(), limit: z.number().int().min(1).max(1000).optional() })
  .optional();
export const JobsList = z.object({ jobs: z.array(Job) });
export const JobsSubmitBatch = z.object({
  request: JobRequest,
  /** N variations of one prompt, each with its own seed. */
  count: z.number().int().min(1).max(16),
  /** docs/workflows.md, "Submit at…": ISO time the jobs wait for (hold `scheduled`); absent = now. */
  submitAt: z.iso.datetime({ offset: true }).optional(),
});
/** Schedules a queued job for `at` (ISO), or null to submit it now. (docs/workflows.md) */
export const JobsSchedule = z.object({
  id: z.string().min(1).max(200),
  at: z.iso.datetime({ offset: true }).nullable(),
});
export const JobsReorder = z.object({
  id: z.string().min(1).max(200),
  /** The new 0-based position among queued jobs (clamped). */
  toIndex: z.number().int().min(0),
});
