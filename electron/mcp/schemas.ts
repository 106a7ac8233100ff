import { z } from 'zod';
import { CONTENT_LIMITS } from '../../shared/api/index.ts';
import { RoutingMode, VideoGenerationRequest } from '../../shared/api/generations.ts';
import { PriceEntry } from '../../shared/api/model-records.ts';
import { MediaKind } from '../../shared/api/media.ts';
import { RoutingPreview, RoutingPreviewRow } from '../../shared/api/routing.ts';
import { JOB_STATES } from '../../shared/ipc/schemas/jobs.ts';

/**
 * The tools' inputs and outputs (docs/agents.md). Inputs are the v1 request's fields in its own
 * spelling (snake_case), so a request an agent writes for the service works here as it is.
 */
const id = z.string().min(1).max(200);

/*
 * Output spellings every MCP client reads (the Inspector's schema portability check, docs/agents.md):
 * a nullable field is `anyOf` of single-type branches, not a `type` array (zod folds a bare branch
 * into one; a description keeps it apart), and a free-form object says `additionalProperties: true`
 * instead of an empty schema.
 */
const orNull = <T extends z.ZodType>(inner: T, description: string) => inner.describe(description).nullable();
const freeForm = <T extends z.ZodObject>(object: T, description: string) =>
  object.meta({ additionalProperties: true, description });
const PortablePriceEntry = freeForm(PriceEntry, 'A line of the price table (docs/providers.md "Prices")');

/** The v1 request's own rules (shared/api), made optional where the tools have a default. */
const v1 = VideoGenerationRequest.shape;
const commonRequest = {
  model: v1.model.optional().describe('Model id (list_models); default the first of the kind'),
  provider: v1.provider.describe('Pin a provider: routing is bypassed'),
  routing: RoutingMode.optional().describe('optimal (default), cheapest or compatible'),
  public: z.boolean().optional(),
  seed: v1.seed,
  style: v1.style,
  aspect_ratio: z.string().trim().min(1).max(20).optional(),
};

/** The tools, by the names docs/agents.md gives (`npm run mcp:inspect` checks them). */
export const TOOL_NAMES = [
  'cancel_generation',
  'continue_shot',
  'download_media',
  'export_sequence',
  'generate_image',
  'generate_video',
  'get_generation',
  'list_models',
  'preview_route',
  'search_library',
] as const;

export const VideoRequest = {
  ...commonRequest,
  prompt: z.string().trim().min(1).max(CONTENT_LIMITS.promptVideoChars),
  size: z.string().trim().min(1).max(20).optional().describe('360p, 480p, 720p, 1080p …'),
  duration: z.number().positive().max(CONTENT_LIMITS.videoMaxSeconds).optional().describe('Seconds'),
  image_url: z
    .string()
    .max(4096)
    .regex(/^https?:\/\/\S+$/i, 'image_url must be an http(s) URL')
    .optional()
    .describe('Start image: an http(s) URL the service can fetch'),
  image_media_id: id.optional().describe('Start image: a library image (search_library)'),
  end_image_url: z
    .string()
    .max(4096)
    .regex(/^https?:\/\/\S+$/i, 'end_image_url must be an http(s) URL')
    .optional()
    .describe('End frame, with a start image, for models whose parameters name end_image_url: an http(s) URL'),
  end_image_media_id: id.optional().describe('End frame: a library image (search_library)'),
};

export const ImageRequest = {
  ...commonRequest,
  prompt: z.string().trim().min(1).max(CONTENT_LIMITS.promptImageChars),
  size: z
    .string()
    .regex(/^[1-9]\d{0,4}x[1-9]\d{0,4}$/, 'size must have the form <width>x<height>')
    .optional(),
};

const wait = z
  .boolean()
  .optional()
  .describe('Wait for the result (progress is reported); default: answer with the generation id at once');

export const GenerateVideoInput = { ...VideoRequest, wait };
export const GenerateImageInput = { ...ImageRequest, wait };

export const PreviewRouteInput = {
  kind: MediaKind.default('video'),
  ...VideoRequest,
  prompt: z.string().trim().min(1).max(CONTENT_LIMITS.promptVideoChars).default('routing preview'),
  size: z.string().trim().min(1).max(20).optional(),
};

export const ContinueShotInput = {
  media_id: id.describe('The video to continue: its last frame becomes the start image'),
  prompt: z.string().trim().min(1).max(CONTENT_LIMITS.promptVideoChars),
  model: commonRequest.model.describe('Default: the model of the shot continued'),
  provider: commonRequest.provider,
  routing: commonRequest.routing,
  seed: commonRequest.seed,
  style: commonRequest.style,
  size: VideoRequest.size,
  duration: VideoRequest.duration,
  wait,
};

const MediaFile = z.object({
  media_id: z.string(),
  path: orNull(z.string(), 'The file in the library; null until it is downloaded'),
  sidecar_path: orNull(z.string(), 'Its JSON sidecar; null until it is downloaded'),
});

export const GenerationOutput = {
  generation_id: z.string(),
  status: z.enum(JOB_STATES),
  step: orNull(z.string(), 'The step it is at (queued, generating …); null once final'),
  price: orNull(z.number(), 'USD, routed or charged; null while unknown'),
  provider: orNull(z.string(), 'The provider routing chose; null while unknown'),
  waiting: orNull(z.string(), 'What it waits for (a rate limit, a queue); null when nothing'),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  media: z.array(MediaFile),
};

export const Lineage = z.object({
  chain_id: z.string(),
  position: z.number().int(),
  parent_id: orNull(z.string(), 'The shot it continues; null for the first'),
});

export const LibraryEntry = z.object({
  media_id: z.string(),
  kind: z.string(),
  prompt: z.string(),
  model: z.string(),
  provider: z.string(),
  size: z.string(),
  duration: z.number(),
  created_at: z.string(),
  path: orNull(z.string(), 'The file in the library; null when not downloaded'),
  expires_at: orNull(z.string(), 'When the service deletes it (ISO 8601); null: kept'),
  lineage: Lineage.nullable(),
});

export const ListModelsOutput = {
  models: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      kind: z.string(),
      description: z.string(),
      parameters: freeForm(z.looseObject({}), "The model's parameters and their rules (duration, size …)"),
      offers: z.array(
        z.object({
          provider: z.string(),
          name: orNull(z.string(), "The provider's name; null when the service does not say"),
          price: z.number(),
          price_unit: orNull(z.string(), 'second or image; null when the service does not say'),
          prices: z.array(PortablePriceEntry).nullable(),
          features: z.array(z.string()),
          sizes: z.array(z.string()),
        }),
      ),
    }),
  ),
};

export const PreviewRouteOutput = RoutingPreview.extend({
  rows: z.array(RoutingPreviewRow.extend({ priceEntry: PortablePriceEntry.nullable().optional() })),
}).shape;

export const SearchLibraryInput = {
  query: z.string().max(500).optional().describe('Words of the prompt'),
  kind: MediaKind.optional(),
  limit: z.number().int().min(1).max(100).default(20),
};
export const SearchLibraryOutput = { items: z.array(LibraryEntry), total: z.number().int() };

export const DownloadMediaOutput = { media_id: z.string(), path: z.string(), sidecar_path: z.string() };

export const ExportSequenceInput = {
  media_ids: z.array(id).min(1).max(100).describe('Videos, in the order they play'),
  trims: z
    .array(z.object({ start: z.number().nonnegative(), end: z.number().positive() }).nullable())
    .optional()
    .describe('In and out points (seconds) per video, or null for the whole clip'),
};
export const ExportSequenceOutput = { path: z.string(), bytes: z.number().int(), mime: z.string() };
