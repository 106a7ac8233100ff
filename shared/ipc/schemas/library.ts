import { z } from 'zod';
import { MediaItem, MediaKind, MediaListQuery, MediaSort } from '../../api/media.ts';

/** A media item as the local index knows it: the service's record plus local metadata. */
export const LibraryItem = z.object({
  item: MediaItem,
  favourite: z.boolean(),
  collectionIds: z.array(z.string()),
  /** ISO 8601; null when the item is exempt from retention. */
  retentionDeadline: z.string().nullable(),
  /** The service deleted it (retention) before it was downloaded. */
  lost: z.boolean(),
  /** Absolute path of the downloaded file, or null. */
  localPath: z.string().nullable(),
  /** A URL the renderer can play: clipdesk-media:// in Electron, the host's /local-media/ in browser mode. */
  localUrl: z.string().nullable(),
  /**
   * A small low-resolution proxy of a video for hover-play, made once when the take is saved
   * (docs/workflows.md, "Preview renditions"): the same kind of URL as `localUrl`; absent without one.
   */
  previewUrl: z.string().nullish(),
  /** The shot chain it is part of (two shots or more), for the tile's badge. (docs/workflows.md) */
  chain: z
    .object({ chainId: z.string(), position: z.number().int().min(1), length: z.number().int().min(2) })
    .nullish(),
});
export type LibraryItem = z.infer<typeof LibraryItem>;

const text = z.string().trim().min(1).max(200);

export const LibraryQuery = z.object({
  media: MediaKind.optional(),
  size: text.optional(),
  model: text.optional(),
  provider: text.optional(),
  /** Full-text search on the prompt. */
  search: z.string().max(500).optional(),
  sort: MediaSort.default('newest'),
  downloaded: z.boolean().optional(),
  favourite: z.boolean().optional(),
  collectionId: text.optional(),
  /** `takes`: generated items; `inputs`: uploads and extracted frames (docs/workflows.md, "The Library"). */
  origin: z.enum(['takes', 'inputs']).optional(),
  /** Only items whose deadline falls within this many hours. */
  expiringWithinHours: z
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .optional(),
  includeLost: z.boolean().default(false),
  /** Opaque keyset cursor from the previous page's `nextCursor`. */
  cursor: z.string().max(1000).optional(),
  limit: z.number().int().min(1).max(500).default(100),
});
export type LibraryQuery = z.infer<typeof LibraryQuery>;
export type LibraryQueryInput = z.input<typeof LibraryQuery>;

export const LibraryPage = z.object({
  items: z.array(LibraryItem),
  nextCursor: z.string().nullable(),
  /** Matching items in the index (all pages). */
  total: z.number().int().nonnegative(),
});
export type LibraryPage = z.infer<typeof LibraryPage>;

export const ItemId = z.object({ id: z.string().min(1).max(200) });
export const ItemIds = z.object({ ids: z.array(z.string().min(1).max(200)).min(1).max(10_000) });

export const SyncInput = z.object({ full: z.boolean().default(false) }).optional();
export const SyncResult = z.object({
  added: z.number().int().nonnegative(),
  updated: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
  requests: z.number().int().nonnegative(),
});

export const SetFavourite = z.object({ ids: ItemIds.shape.ids, favourite: z.boolean() });
export const Retain = z.object({
  id: z.string().min(1).max(200),
  days: z.number().int().min(1).max(3650).optional(),
  forever: z.boolean().optional(),
});
export const DownloadResult = z.object({
  /** Items queued for download; progress comes as transfer.progress events. */
  queued: z.array(z.string()),
  /** Items that were already on disk. */
  present: z.array(z.string()),
});

export const EXPORT_FORMATS = ['mp4', 'webm', 'gif', 'frame', 'lastFrame', 'contactSheet'] as const;
export const ExportFormat = z.enum(EXPORT_FORMATS);
export type ExportFormat = z.infer<typeof ExportFormat>;

export const ExportInput = z.object({
  id: z.string().min(1).max(200),
  format: ExportFormat,
  /** frame: the time in seconds. */
  at: z.number().nonnegative().optional(),
  /** contactSheet: grid size. */
  columns: z.number().int().min(1).max(10).optional(),
  rows: z.number().int().min(1).max(10).optional(),
});

/** A file main wrote, and a URL to show it. */
export const LocalFile = z.object({
  path: z.string(),
  url: z.string(),
  mime: z.string(),
  bytes: z.number().int().nonnegative(),
});
export type LocalFile = z.infer<typeof LocalFile>;

export const RevealResult = z.object({ path: z.string(), revealed: z.boolean() });

/** Other users' public media, straight from the service's `GET /media`. */
export const FeedQuery = MediaListQuery.omit({ user: true }).partial();
/** Other users' public media; `nextPage` is the `page` to ask for next (null at the end). */
export const FeedPage = z.object({
  items: z.array(MediaItem),
  total: z.number().int().nonnegative(),
  nextPage: z.number().int().nonnegative().nullable(),
});

export const Collection = z.object({ id: z.string(), name: z.string(), count: z.number().int().nonnegative() });
export type Collection = z.infer<typeof Collection>;
export const CollectionsList = z.object({ collections: z.array(Collection) });
export const CollectionCreate = z.object({ name: z.string().trim().min(1).max(100) });
export const CollectionRename = z.object({ id: z.string().min(1).max(200), name: z.string().trim().min(1).max(100) });
export const CollectionItems = z.object({ id: z.string().min(1).max(200), itemIds: ItemIds.shape.ids });
