import { z } from 'zod';
import { ROUTING_MODES } from './constants.ts';
import { CONTENT_LIMITS } from './constants.ts';
import { GeneratedItem, PageQuery } from './media.ts';
import { IMAGE_SIZE, parseImageSize } from './offer-sizes.ts';
import { promptLength } from './spec-rules.ts';

// Prompt lengths are code points (spec-rules.ts), as every layer counts them.

export { ROUTING_EXPLANATIONS, ROUTING_MODES } from './constants.ts';
export const RoutingMode = z.enum(ROUTING_MODES);
export type RoutingMode = z.infer<typeof RoutingMode>;

const commonFields = {
  model: z.string().trim().min(1, 'model is required').max(200),
  provider: z.string().trim().min(1).max(200).optional(),
  routing: RoutingMode.default('optimal'),
  public: z.boolean().default(true),
  /** Extension: makes procedural output reproducible. */
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional(),
  /**
   * docs/workflows.md: where the final generation is POSTed (http(s), at most 2048 characters; the service
   * checks it). Used by asynchronous requests (`Prefer: respond-async`).
   */
  webhook_url: z.string().optional(),
};

/**
 * `POST /videos/generations`. Models may take parameters of their own (e.g. `style`), so unknown
 * keys are kept and checked against the model's parameter rules by the service.
 */
export const VideoGenerationRequest = z.looseObject({
  ...commonFields,
  prompt: z
    .string()
    .min(1, 'prompt is required')
    .refine((p) => promptLength(p) <= CONTENT_LIMITS.promptVideoChars, {
      message: `prompt must be at most ${CONTENT_LIMITS.promptVideoChars} characters`,
    }),
  size: z.string().trim().min(1).max(20).optional(),
  image_url: z.string().min(1).max(4096).optional(),
  duration: z.number().positive().max(CONTENT_LIMITS.videoMaxSeconds).optional(),
  style: z.string().trim().min(1).max(50).optional(),
});
/**
 * The body as a caller writes it and sends it, the one type of the wire (as openai-node's
 * `create(body: VideoCreateParams)`): the service parses it into the same fields with the
 * defaults filled in (docs/architecture.md, "A generation's trip").
 */
export type VideoGenerationRequest = z.input<typeof VideoGenerationRequest>;

/** OpenAI's `quality` values for images.generate. */
export const IMAGE_QUALITIES = ['standard', 'hd', 'low', 'medium', 'high', 'auto'] as const;

/** `POST /images/generations`. Sizes are `WxH`; `n` and `response_format` follow OpenAI's client. */
export const ImageGenerationRequest = z.looseObject({
  ...commonFields,
  prompt: z
    .string()
    .min(1, 'prompt is required')
    .refine((p) => promptLength(p) <= CONTENT_LIMITS.promptImageChars, {
      message: `prompt must be at most ${CONTENT_LIMITS.promptImageChars} characters`,
    }),
  size: z
    .string()
    .regex(IMAGE_SIZE, 'size must have the form <width>x<height>')
    .refine((s) => parseImageSize(s).every((n) => n <= CONTENT_LIMITS.imageMaxDimension), {
      message: `size must be at most ${CONTENT_LIMITS.imageMaxDimension}x${CONTENT_LIMITS.imageMaxDimension}`,
    })
    .optional(),
  /** Images per request, up to the model's `parameters.n.max` (checked by the service). */
  n: z.number().int().min(1).optional(),
  /** OpenAI's `style` values are accepted too: `natural` is the model's plain look, `vivid` a style. */
  style: z.string().trim().min(1).max(50).optional(),
  /** OpenAI's quality values; the service says which a model renders. */
  quality: z.enum(IMAGE_QUALITIES).optional(),
  /** `b64_json` adds each image's bytes, base64, to its item (OpenAI's field). */
  response_format: z.enum(['url', 'b64_json']).optional(),
});
/** The body as a caller sends it (see VideoGenerationRequest). */
export type ImageGenerationRequest = z.input<typeof ImageGenerationRequest>;

/** Timings are in seconds (docs/api.md; the spec leaves the unit open). */
export const GenerationStats = z.looseObject({
  setupTime: z.number(),
  processingTime: z.number(),
  generationTime: z.number(),
  retries: z.number().int().nonnegative(),
  providerId: z.string(),
  // Extensions.
  providerSlug: z.string().optional(),
  routing: z.string().optional(),
  ignoredParameters: z.array(z.string()).optional(),
});
export type GenerationStats = z.infer<typeof GenerationStats>;

/** The generation envelope. `price` is in US dollars. `created` (Unix seconds) is OpenAI's field. */
export const GenerationResponse = z.looseObject({
  success: z.literal(true),
  data: z.array(GeneratedItem),
  price: z.number(),
  stats: GenerationStats,
  created: z.number().int().optional(),
});
export type GenerationResponse = z.infer<typeof GenerationResponse>;

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/**
 * Asynchronous generations (docs/workflows.md; RFC 7240 `Prefer: respond-async`). The steps are the spec's
 * processing steps in its order; `succeeded`, `failed` and `canceled` are final.
 */
export const GENERATION_STATUSES = [
  'queued',
  'generating',
  'transcoding',
  'thumbnail',
  'storing',
  'succeeded',
  'failed',
  'canceled',
] as const;
export const GenerationStatus = z.enum(GENERATION_STATUSES);
export type GenerationStatus = z.infer<typeof GenerationStatus>;
export const FINAL_GENERATION_STATUSES: readonly GenerationStatus[] = ['succeeded', 'failed', 'canceled'];

/** Which operation made the generation. */
export const GenerationOperation = z.enum(['videos.generations', 'images.generations', 'videos.variations']);

/** A generation as `GET /generations/:id` shows it, and as a webhook delivers it when final. */
export const Generation = z.looseObject({
  id: z.string(),
  object: z.literal('generation'),
  operation: GenerationOperation,
  status: GenerationStatus,
  /** The provider's queue position while queued there, when it reports one. */
  queuePosition: z.number().int().nonnegative().optional(),
  /** 0–1, when the provider reports progress. */
  progress: z.number().min(0).max(1).optional(),
  /** ISO 8601. */
  createdAt: z.string(),
  updatedAt: z.string(),
  /** On success: the same `data`, `price` and `stats` as the synchronous answer. */
  data: z.array(GeneratedItem).optional(),
  price: z.number().optional(),
  stats: GenerationStats.optional(),
  /** On failure: the error body's `error`. */
  error: z.looseObject({ type: z.string(), message: z.string() }).optional(),
  webhookUrl: z.string().optional(),
});
export type Generation = z.infer<typeof Generation>;

/**
 * `202 Accepted` to a request with `Prefer: respond-async` (and `Location: {base}/generations/{id}`):
 * a single record, under `result` (the spec keeps `data` for arrays). Services before that sent it
 * under `data`; the client reads both (LegacyGenerationAccepted).
 */
export const GenerationAccepted = z.looseObject({ success: z.literal(true), result: Generation });
export const LegacyGenerationAccepted = z.looseObject({ success: z.literal(true), data: Generation });
/** `GET /generations/:id` and `DELETE /generations/:id` (single records under `result`). */
export const GenerationRecordResponse = z.looseObject({ success: z.literal(true), result: Generation });
export const GenerationListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({ total: z.number().int().nonnegative(), generations: z.array(Generation) }),
});
export type GenerationAccepted = z.infer<typeof GenerationAccepted>;
export type GenerationRecordResponse = z.infer<typeof GenerationRecordResponse>;
export type GenerationListResponse = z.infer<typeof GenerationListResponse>;

/** `GET /generations?status=&limit=&page=` (the caller's key's generations, newest first). */
export const GenerationListQuery = PageQuery.extend({ status: GenerationStatus.optional() });

/** `POST /videos/variations`. */
export const VideoVariationRequest = z.looseObject({
  media_id: z.string().trim().min(1),
  n: z.number().int().min(1).max(4).default(1),
  prompt: z.string().optional(),
  seed: z.number().int().min(0).optional(),
  /** 0–1: how far from the source (used as the start frame's weight where the provider has one). */
  strength: z.number().min(0).max(1).optional(),
  routing: RoutingMode.default('optimal'),
  provider: z.string().trim().min(1).optional(),
  webhook_url: z.string().optional(),
  public: z.boolean().default(false),
});
/** The body as a caller sends it (see VideoGenerationRequest). */
export type VideoVariationRequest = z.input<typeof VideoVariationRequest>;
