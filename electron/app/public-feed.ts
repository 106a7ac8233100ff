import type { MediaItem, MediaListQuery, MediaListQueryInput } from '../../shared/api/index.ts';
import type { MediaPage, RequestOptions } from '../core/api/index.ts';

export interface FeedSource {
  listMedia(query: MediaListQueryInput, options?: RequestOptions): Promise<MediaPage>;
}

export interface FeedPageResult {
  items: MediaItem[];
  /** Other users' public items matching the filters. */
  total: number;
  /** The service page to ask for next; null at the end. */
  nextPage: number | null;
}

/** Service pages a single feed request may skip when they hold only the caller's own items. */
const MAX_SKIPPED_PAGES = 5;

/**
 * The public feed: other users' public media. `GET /media` lists the caller's own media and
 * everyone else's public media, and the spec has no filter for "not mine", so the feed drops the
 * caller's items and counts them out of the total (the others' items the service shows are
 * exactly their public ones). Pages that held only the caller's items are skipped, a few per
 * request, so a prolific creator does not get empty feed pages.
 */
export async function publicFeedPage(
  source: FeedSource,
  query: Partial<MediaListQuery>,
  options?: RequestOptions,
): Promise<FeedPageResult> {
  const limit = query.limit ?? 25;
  let page = query.page ?? 0;
  const fetchPage = (n: number) => source.listMedia({ ...query, page: n, limit }, options);
  // Who "me" is and how many of the matches are mine, asked alongside the first page.
  const [mine, first] = await Promise.all([
    source.listMedia({ ...query, user: 'me', page: 0, limit: 1 }, options),
    fetchPage(page),
  ]);
  const me = mine.medias[0]?.user ?? null;
  const total = Math.max(0, first.total - mine.total);
  for (let all = first, skipped = 0; ; skipped++) {
    const items = all.medias.filter((m) => m.user !== me);
    const more = (page + 1) * limit < all.total && all.medias.length > 0;
    if (items.length > 0 || !more || skipped >= MAX_SKIPPED_PAGES)
      return { items, total, nextPage: more ? page + 1 : null };
    page += 1;
    all = await fetchPage(page);
  }
}
