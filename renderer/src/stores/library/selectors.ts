import type { FeedQuery, LibraryItem, LibraryQueryInput } from '../../../../shared/ipc/index.ts';
import type { MediaItem } from '../../../../shared/api/media.ts';
import type { z } from 'zod';
import type { LibraryDragPayload } from '../../lib/drag.ts';
import { formatPrice } from '../../lib/format.ts';
import {
  EXPIRING_SOON_HOURS,
  FEED_PAGE_SIZE,
  PAGE_SIZE,
  type LibraryFilters,
  type LibraryState,
} from './initialState.ts';

/** The library.query input for the current filters (only the filters that are set). */
export function libraryQuery(filters: LibraryFilters, cursor: string | null): LibraryQueryInput {
  const q: LibraryQueryInput = { sort: filters.sort, limit: PAGE_SIZE, origin: filters.origin };
  if (filters.media) q.media = filters.media;
  if (filters.size) q.size = filters.size;
  if (filters.model) q.model = filters.model;
  if (filters.provider) q.provider = filters.provider;
  if (filters.search.trim()) q.search = filters.search.trim();
  if (filters.downloaded) q.downloaded = true;
  if (filters.favourite) q.favourite = true;
  if (filters.expiringSoon) q.expiringWithinHours = EXPIRING_SOON_HOURS;
  if (cursor) q.cursor = cursor;
  return q;
}

export function feedQuery(filters: LibraryFilters, page: number): z.input<typeof FeedQuery> {
  const q: z.input<typeof FeedQuery> = { sort: filters.sort, limit: FEED_PAGE_SIZE, page };
  if (filters.media) q.media = filters.media;
  if (filters.size) q.size = filters.size;
  if (filters.model) q.model = filters.model;
  if (filters.provider) q.provider = filters.provider;
  if (filters.search.trim()) q.search = filters.search.trim();
  return q;
}

/** A feed item shown with the library's tile. */
export function feedItem(item: MediaItem): LibraryItem {
  return {
    item,
    favourite: false,
    collectionIds: [],
    retentionDeadline: item.expiresAt ?? null,
    lost: false,
    localPath: null,
    localUrl: null,
  };
}

export function activeFilterCount(f: LibraryFilters): number {
  let n = 0;
  if (f.media) n++;
  if (f.size) n++;
  if (f.model) n++;
  if (f.provider) n++;
  if (f.search.trim()) n++;
  if (f.downloaded) n++;
  if (f.favourite) n++;
  if (f.expiringSoon) n++;
  return n;
}

export function selectedIds(state: Pick<LibraryState, 'selected'>): string[] {
  return Object.keys(state.selected);
}

export function detailItem(
  state: Pick<LibraryState, 'items' | 'detailId'> & Partial<Pick<LibraryState, 'detailExtra'>>,
): LibraryItem | undefined {
  if (!state.detailId) return undefined;
  const loaded = state.items.find((i) => i.item.id === state.detailId);
  if (loaded) return loaded;
  return state.detailExtra?.item.id === state.detailId ? state.detailExtra : undefined;
}

/** What the thumbnail shows: the local file for images, else the service's thumbnail. */
export function thumbnailUrl(entry: LibraryItem): string | null {
  const { item } = entry;
  if (item.thumbnailUrl) return item.thumbnailUrl;
  if (item.media === 'image') return entry.localUrl ?? item.url;
  return null;
}

/**
 * What a take carries when dragged (from a Library tile, the filmstrip or the chain timeline) onto
 * a frame slot: a video's is its last frame, taken on drop; an image is used as it is.
 */
export function dragPayload(entry: LibraryItem): LibraryDragPayload {
  const { item } = entry;
  return {
    id: item.id,
    name: item.prompt.slice(0, 60) || item.id,
    previewUrl: thumbnailUrl(entry) ?? item.url,
    media: item.media === 'video' ? 'video' : 'image',
  };
}

/** What the player plays: the downloaded file when there is one, else the service's URL. */
export function playableUrl(entry: LibraryItem): string {
  return entry.localUrl ?? entry.item.url;
}

/**
 * What hover-play and the small players play (docs/workflows.md, "Preview renditions"): the app's
 * own low-resolution proxy when one was made at save, else the smallest video rendition the service
 * sent, else the take itself. Never the master when something smaller exists.
 */
export function previewUrl(entry: LibraryItem): string {
  if (entry.previewUrl) return entry.previewUrl;
  const videos = (entry.item.formats ?? []).filter((f) => f.mime.startsWith('video/') && f.bytes > 0);
  const smallest = [...videos].sort((a, b) => a.bytes - b.bytes)[0];
  const master = entry.item.bytes ?? Number.POSITIVE_INFINITY;
  if (smallest && smallest.bytes < master && smallest.url !== entry.item.url) return smallest.url;
  return playableUrl(entry);
}

/** The model the service gives an uploaded file (docs/workflows.md, "The Library"): an input, not a take. */
export const INPUT_MODEL = 'upload/file';

/** An upload or an extracted frame: the Library's "Inputs", which cost nothing and have no prompt. */
export function isInput(item: Pick<MediaItem, 'model'>): boolean {
  return item.model === INPUT_MODEL;
}

/**
 * What a tile says the take cost: the service's price for it, "Input" for an upload (nothing was
 * charged), or "—" when the service did not say (an older service, another's feed item).
 */
export function tilePrice(item: Pick<MediaItem, 'model' | 'price'>): { text: string; title: string } {
  if (isInput(item)) return { text: 'Input', title: 'Uploaded: not charged' };
  if (item.price === undefined) return { text: '—', title: 'The service did not report a price' };
  return { text: formatPrice(item.price), title: `Charged ${formatPrice(item.price)}` };
}

/** `video/webm` → `WEBM`: a format's short name. */
export function formatLabel(mime: string): string {
  return (mime.split('/')[1] ?? mime).replace(/^x-/, '').toUpperCase();
}

/**
 * The size of the clip itself (its main file, in the item's own mime) and of its other renditions,
 * each on its own. An item's `bytes` may count every rendition and the thumbnail together, so it is
 * used only when the item lists no formats to tell them apart.
 */
export function fileSizes(item: MediaItem): { main: number | null; others: { mime: string; bytes: number }[] } {
  const formats = item.formats ?? [];
  if (formats.length === 0) return { main: item.bytes ?? null, others: [] };
  const main = formats.find((f) => f.mime === item.mime);
  return {
    main: main?.bytes ?? null,
    others: formats.filter((f) => f !== main).map((f) => ({ mime: f.mime, bytes: f.bytes })),
  };
}
