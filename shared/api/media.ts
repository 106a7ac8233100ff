import { z } from 'zod';

export const MediaKind = z.enum(['video', 'image']);

/**
 * The file types of media, by MIME type, with the file extension each is stored and saved under
 * (the service's stored files, the app's downloads).
 */
export const MEDIA_EXTENSIONS: Readonly<Record<string, string>> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};
export type MediaKind = z.infer<typeof MediaKind>;

/** One stored rendition of an item (docs/api.md, "Media extras"). */
export const MediaFormat = z.looseObject({
  mime: z.string(),
  url: z.string(),
  bytes: z.number().int().nonnegative(),
});
export type MediaFormat = z.infer<typeof MediaFormat>;

/**
 * The fields shared by a generated item and a listed media item (spec, "Media item").
 * Loose objects: unknown fields of another implementation are kept, not stripped.
 * `media` stays a plain string on the wire so that a kind we do not know does not break parsing.
 */
const itemFields = {
  id: z.string(),
  url: z.string(),
  mime: z.string(),
  user: z.string(),
  media: z.string(),
  model: z.string(),
  provider: z.string(),
  prompt: z.string(),
  size: z.string(),
  /** Seconds; 0 for images. */
  duration: z.number(),
  createdAt: z.string(),
  // Extensions (docs/api.md): optional, so a client works against a service without them.
  thumbnailUrl: z.string().optional(),
  formats: z.array(MediaFormat).optional(),
  public: z.boolean().optional(),
  /** When retention deletes it; null when it is exempt (downloaded or retained for good). */
  expiresAt: z.string().nullable().optional(),
  downloadedAt: z.string().nullable().optional(),
  /** When the signed URLs in this item stop working (ISO 8601); null when they do not expire. */
  urlExpiresAt: z.string().nullable().optional(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
  price: z.number().optional(),
  bytes: z.number().int().optional(),
  /** The id of the video this one is a variation of (POST /videos/variations). */
  variationOf: z.string().optional(),
};

/** An element of `data` in a generation response: the media item without modelSlug/providerName. */
export const GeneratedItem = z.looseObject(itemFields);
export type GeneratedItem = z.infer<typeof GeneratedItem>;

export const MediaItem = z.looseObject({
  ...itemFields,
  /** base/model:version */
  modelSlug: z.string(),
  providerName: z.string(),
});
export type MediaItem = z.infer<typeof MediaItem>;

export const MediaListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({
    total: z.number().int().nonnegative(),
    medias: z.array(MediaItem),
  }),
});
export type MediaListResponse = z.infer<typeof MediaListResponse>;

/** One item (`GET /media/:id`, `POST /media/:id/retain`): a single record, under `result`. */
export const MediaItemResponse = z.looseObject({ success: z.literal(true), result: MediaItem });
export type MediaItemResponse = z.infer<typeof MediaItemResponse>;

export const MEDIA_LIST_DEFAULT_LIMIT = 25;
export const MEDIA_LIST_MAX_LIMIT = 100;
/** Pages past this are refused rather than turned into a huge OFFSET. */
export const MAX_PAGE = 1_000_000;

const intFromQuery = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^-?\d+$/, 'must be an integer'),
  ])
  .transform(Number);

/** Query parameters of a paginated list (`/media`, `/models`, `/providers`). Larger limits clamp to 100. */
export const PageQuery = z.object({
  limit: intFromQuery
    .pipe(z.number().int().min(1, 'limit must be at least 1'))
    .transform((n) => Math.min(n, MEDIA_LIST_MAX_LIMIT))
    .default(MEDIA_LIST_DEFAULT_LIMIT),
  page: intFromQuery
    .pipe(z.number().int().min(0, 'page must be 0 or more').max(MAX_PAGE, `page must be at most ${MAX_PAGE}`))
    .default(0),
});
export type PageQuery = z.infer<typeof PageQuery>;

export const MediaSort = z.enum(['newest', 'oldest']);
export type MediaSort = z.infer<typeof MediaSort>;

const filterText = z.string().trim().min(1).max(200);

/** `GET /media` query parameters (spec, "GET /media"). */
export const MediaListQuery = PageQuery.extend({
  user: filterText.optional(),
  media: MediaKind.optional(),
  size: filterText.optional(),
  model: filterText.optional(),
  provider: filterText.optional(),
  search: z.string().max(500).optional(),
  sort: MediaSort.default('newest'),
});
export type MediaListQuery = z.infer<typeof MediaListQuery>;
export type MediaListQueryInput = z.input<typeof MediaListQuery>;
