import type { GeneratedItem, MediaItem, MediaKind, MediaListQuery } from '../../shared/api/index.ts';
import type { Db } from './db.ts';
import { sql } from './db.ts';

/** One stored rendition; `name` is a file in the item's directory. */
export interface StoredFile {
  name: string;
  mime: string;
  bytes: number;
}

export interface MediaRow {
  seq: number;
  id: string;
  user_id: string;
  key_id: string | null;
  kind: MediaKind;
  model: string;
  model_version: string;
  provider_id: string;
  provider_slug: string;
  provider_name: string;
  prompt: string;
  size: string;
  duration: number;
  width: number;
  height: number;
  mime: string;
  files: string;
  thumbnail: string | null;
  bytes: number;
  price: number;
  public: number;
  created_at: number;
  expires_at: number | null;
  downloaded_at: number | null;
  /** The listing's order key (db.ts, version 3). */
  ord: number;
  /** The item this one is a variation of (POST /videos/variations; version 5). */
  variation_of?: string | null;
}

export type NewMedia = Omit<MediaRow, 'seq' | 'files' | 'downloaded_at' | 'ord'> & { files: StoredFile[] };

export function insertMedia(db: Db, m: NewMedia): void {
  // variation_of is named only when set: the statement also serves databases from before version 5.
  const lineage = m.variation_of !== undefined && m.variation_of !== null;
  sql(
    db,
    `INSERT INTO media (id, user_id, key_id, kind, model, model_version, provider_id, provider_slug, provider_name, prompt, size,
       duration, width, height, mime, files, thumbnail, bytes, price, public, created_at, expires_at${lineage ? ', variation_of' : ''})
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${lineage ? ', ?' : ''})`,
  ).run(
    m.id,
    m.user_id,
    m.key_id,
    m.kind,
    m.model,
    m.model_version,
    m.provider_id,
    m.provider_slug,
    m.provider_name,
    m.prompt,
    m.size,
    m.duration,
    m.width,
    m.height,
    m.mime,
    JSON.stringify(m.files),
    m.thumbnail,
    m.bytes,
    m.price,
    m.public,
    m.created_at,
    m.expires_at,
    ...(lineage ? [m.variation_of ?? null] : []),
  );
}

export function getMedia(db: Db, id: string): MediaRow | undefined {
  return sql(db, 'SELECT * FROM media WHERE id = ?').get(id) as MediaRow | undefined;
}

export function mediaExists(db: Db, id: string): boolean {
  return sql(db, 'SELECT 1 AS x FROM media WHERE id = ?').get(id) !== undefined;
}

export function storedFiles(row: MediaRow): StoredFile[] {
  return JSON.parse(row.files) as StoredFile[];
}

export interface ResolvedMediaFilters {
  viewer: string;
  user?: string;
  media?: MediaKind;
  size?: string;
  model?: string;
  modelVersion?: string;
  providerId?: string;
  /** A substring of the prompt; never contains U+0000 or U+FFFF (see unsearchable). */
  search?: string;
  sort: MediaListQuery['sort'];
}

/**
 * Whether a search holds a character no prompt can be found by: FTS5's query syntax cannot express
 * U+0000, and U+FFFF pads the index's one- and two-character grams (db.ts, version 3). The route
 * answers 400 for such a search.
 */
export function unsearchable(search: string): boolean {
  return search.includes('\u0000') || search.includes('\uffff');
}

/** A quoted FTS5 string: doubling the quotes makes every other character literal text. */
function ftsString(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * The filters as one FTS5 expression over media_find, or over media_grams for a search under
 * three characters (db.ts, version 3); null when nothing can match. Every value is a token or a
 * quoted string, so no character of the request is FTS syntax.
 */
function findExpression(db: Db, f: ResolvedMediaFilters): { table: string; match: string } | null {
  const search = f.search !== undefined && f.search.length > 0 ? f.search : undefined;
  const searchLength = search === undefined ? 0 : [...search].length;
  const table = search !== undefined && searchLength < 3 ? 'media_grams' : 'media_find';
  // media_grams keeps no positions, so it cannot filter by column; it needs none, as no window of
  // its grams is a tag token (every window holds a U+FFFF).
  const column = (name: string) => (table === 'media_find' ? `${name} : ` : '');
  /** The token of a filter value, or null when no item ever had that value. */
  const term = (field: string, value: string): string | null => {
    const row = sql(db, 'SELECT token FROM media_terms WHERE field = ? AND value = ?').get(field, value) as
      { token: string } | undefined;
    return row ? `${column(field)}${ftsString(row.token)}` : null;
  };
  const all: Array<string | null> = [];
  if (f.user !== undefined) {
    all.push(term('owner', f.user));
    // Another user's items: only the public ones.
    if (f.user !== f.viewer) all.push(term('vis', 'public'));
  } else {
    const visible = [term('vis', 'public'), term('owner', f.viewer)].filter((t) => t !== null);
    all.push(visible.length === 0 ? null : `(${visible.join(' OR ')})`);
  }
  if (f.media !== undefined) all.push(term('kind', f.media));
  if (f.size !== undefined) all.push(term('size', f.size));
  if (f.model !== undefined) {
    all.push(f.modelVersion === undefined ? term('model', f.model) : term('version', `${f.model}:${f.modelVersion}`));
  }
  if (f.providerId !== undefined) all.push(term('provider', f.providerId));
  if (search !== undefined) {
    // Three characters or more: a quoted phrase over the prompt's trigrams, a case-insensitive
    // substring match. One or two: the single gram token padded with U+FFFF.
    all.push(
      searchLength >= 3 ? `prompt : ${ftsString(search)}` : ftsString(search + '\uffff'.repeat(3 - searchLength)),
    );
  }
  return all.includes(null) ? null : { table, match: all.join(' AND ') };
}

/** The filters other than visibility and search, as SQL on media (media_counts has the same columns). */
function filterClauses(f: ResolvedMediaFilters): { text: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  const add = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    clauses.push(` AND ${column} = ?`);
    params.push(value);
  };
  add('kind', f.media);
  add('size', f.size);
  add('model', f.model);
  add('model_version', f.modelVersion);
  add('provider_id', f.providerId);
  return { text: clauses.join(''), params };
}

/** `total` without a search: sums of the per-combination counters (db.ts, version 3). */
function countWithoutSearch(db: Db, f: ResolvedMediaFilters): number {
  const { text: filters, params } = filterClauses(f);
  const sum = (text: string, ...leading: Array<string | number>): number =>
    (sql(db, text).get(...leading, ...params) as { n: number | null }).n ?? 0;
  if (f.user === f.viewer) return sum(`SELECT sum(n) AS n FROM media_counts WHERE user_id = ?${filters}`, f.viewer);
  if (f.user !== undefined)
    return sum(`SELECT sum(n) AS n FROM media_counts WHERE user_id = ? AND public = 1${filters}`, f.user);
  // Everyone's public items, plus the viewer's own private ones.
  return (
    sum(`SELECT sum(n) AS n FROM media_public_counts WHERE 1${filters}`) +
    sum(`SELECT sum(n) AS n FROM media_counts WHERE user_id = ? AND public = 0${filters}`, f.viewer)
  );
}

/**
 * What the listing learns at one data version (media_version, bumped by a trigger on every write
 * that changes what a listing holds), so it is never stale:
 * - search totals: counting every match of a common word costs milliseconds, and a client paging
 *   through results asks for the same total on every page;
 * - anchors: the `ord` found at a position of a listing (positions counted oldest first). OFFSET
 *   steps over every entry it skips, so a deep page costs a millisecond or more; a page read near
 *   an anchor steps only from there. Paging on, or asking again for the same page, starts at the
 *   last page's own anchors. A write forgets them all: positions shift.
 */
const KEPT = 256;
const ANCHORS_PER_LISTING = 64;
/** Rows an anchored read may expect to walk before it prefers the index from the nearest end. */
const ANCHORED_WALK_MAX = 4096;
interface ListingCache {
  version: number;
  totals: Map<string, number>;
  anchors: Map<string, Map<number, number>>;
}
const listingCaches = new WeakMap<Db, ListingCache>();

function listingCache(db: Db): ListingCache {
  const version = (sql(db, 'SELECT version FROM media_version').get() as { version: number }).version;
  let cache = listingCaches.get(db);
  if (!cache || cache.version !== version) {
    cache = { version, totals: new Map(), anchors: new Map() };
    listingCaches.set(db, cache);
  }
  return cache;
}

/** Sets `key` in a map that keeps at most `max` entries (the oldest set goes first). */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

function countSearch(cache: ListingCache, db: Db, table: string, match: string): number {
  const key = `${table} ${match}`;
  let total = cache.totals.get(key);
  if (total === undefined) {
    total = (sql(db, `SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(match) as { n: number }).n;
    remember(cache.totals, key, total, KEPT);
  }
  return total;
}

/** Who may see what, as SQL on media: the same rule as findExpression's. */
function visibilityClause(f: ResolvedMediaFilters): { text: string; params: string[] } {
  if (f.user === f.viewer) return { text: 'user_id = ?', params: [f.viewer] };
  if (f.user !== undefined) return { text: 'user_id = ? AND public = 1', params: [f.user] };
  return { text: '(public = 1 OR user_id = ?)', params: [f.viewer] };
}

/** Where a page's read starts: an ord bound (or none) and the entries to skip from it. */
interface ReadPlan {
  ascending: boolean;
  bound?: number;
  skip: number;
}

/**
 * The cheapest way to read positions [lo, hi] (oldest first) of a listing of `total`: from the
 * oldest end, from the newest end, or from the nearest anchor on either side.
 */
export function planRead(anchors: Map<number, number> | undefined, total: number, lo: number, hi: number): ReadPlan {
  let best: ReadPlan =
    lo <= total - 1 - hi ? { ascending: true, skip: lo } : { ascending: false, skip: total - 1 - hi };
  for (const [at, ord] of anchors ?? []) {
    if (at <= lo && lo - at < best.skip) best = { ascending: true, bound: ord, skip: lo - at };
    else if (at >= hi && at - hi < best.skip) best = { ascending: false, bound: ord, skip: at - hi };
  }
  return best;
}

/**
 * `GET /media`: the total number of matching items and one page of them, in created order. The
 * page is read from media_find in `ord` order, so only its own rows are fetched, starting from
 * whichever end or known anchor (above) is nearest.
 */
export function listMedia(
  db: Db,
  f: ResolvedMediaFilters,
  limit: number,
  page: number,
): { total: number; rows: MediaRow[] } {
  const find = findExpression(db, f);
  if (find === null) return { total: 0, rows: [] };
  const { table, match } = find;
  const cache = listingCache(db);
  const searching = f.search !== undefined && f.search.length > 0;
  const total = searching ? countSearch(cache, db, table, match) : countWithoutSearch(db, f);
  const offset = page * limit;
  // Past the end there is nothing to read.
  if (offset >= total) return { total, rows: [] };
  const count = Math.min(limit, total - offset);
  // The page as positions counted oldest first.
  const lo = f.sort === 'oldest' ? offset : total - offset - count;
  const hi = lo + count - 1;
  const key = `${table} ${match}`;
  const known = cache.anchors.get(key);
  // FTS5 does not seek to a rowid bound quickly (it walks its doclists up to it), so a page is read
  // from an anchor through media's own order index, with the filters checked row by row. That walks
  // about (skip + count) / density rows: taken only when that is short; searches never take it.
  let plan = planRead(undefined, total, lo, hi);
  if (!searching && known) {
    const anchored = planRead(known, total, lo, hi);
    const all = (sql(db, 'SELECT sum(n) AS n FROM media_counts').get() as { n: number | null }).n ?? total;
    if (anchored.bound !== undefined && ((anchored.skip + count) * all) / total <= ANCHORED_WALK_MAX) plan = anchored;
  }
  const direction = plan.ascending ? 'ASC' : 'DESC';
  let rows: MediaRow[];
  if (plan.bound === undefined) {
    rows = sql(
      db,
      `SELECT media.* FROM (SELECT rowid AS ord FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid ${direction} LIMIT ? OFFSET ?) AS found
       JOIN media ON media.ord = found.ord ORDER BY media.ord ${direction}`,
    ).all(match, count, plan.skip) as unknown as MediaRow[];
  } else {
    const visible = visibilityClause(f);
    const filters = filterClauses(f);
    rows = sql(
      db,
      // INDEXED BY: the planner would otherwise take an owner's index and sort every row it holds.
      `SELECT * FROM media INDEXED BY media_ord WHERE ord ${plan.ascending ? '>=' : '<='} ? AND ${visible.text}${filters.text}
       ORDER BY ord ${direction} LIMIT ? OFFSET ?`,
    ).all(plan.bound, ...visible.params, ...filters.params, count, plan.skip) as unknown as MediaRow[];
  }
  // Oldest first from here on; both ends of the page become anchors of this listing.
  if (!plan.ascending) rows.reverse();
  const first = rows[0];
  const last = rows.at(-1);
  if (first && last && rows.length === count) {
    const anchors = known ?? new Map<number, number>();
    remember(anchors, lo, first.ord, ANCHORS_PER_LISTING);
    remember(anchors, hi, last.ord, ANCHORS_PER_LISTING);
    if (!known) remember(cache.anchors, key, anchors, KEPT);
  }
  return { total, rows: f.sort === 'oldest' ? rows : rows.reverse() };
}

export interface UrlMaker {
  fileUrl(row: MediaRow, file: string): string;
  /** When the row's file URLs stop working (ISO 8601); null when they do not expire. */
  urlExpiresAt(row: MediaRow): string | null;
}

/** A row as the wire's generated item (no modelSlug/providerName). */
export function toGeneratedItem(row: MediaRow, urls: UrlMaker): GeneratedItem {
  const files = storedFiles(row);
  const primary = files[0];
  const exempt = row.downloaded_at !== null || row.expires_at === null;
  return {
    id: row.id,
    url: primary ? urls.fileUrl(row, primary.name) : '',
    urlExpiresAt: urls.urlExpiresAt(row),
    mime: row.mime,
    user: row.user_id,
    media: row.kind,
    model: row.model,
    provider: row.provider_id,
    prompt: row.prompt,
    size: row.size,
    duration: row.duration,
    createdAt: new Date(row.created_at).toISOString(),
    thumbnailUrl: row.thumbnail ? urls.fileUrl(row, row.thumbnail) : undefined,
    formats: files.map((f) => ({ mime: f.mime, url: urls.fileUrl(row, f.name), bytes: f.bytes })),
    public: row.public === 1,
    expiresAt: exempt || row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
    downloadedAt: row.downloaded_at === null ? null : new Date(row.downloaded_at).toISOString(),
    width: row.width,
    height: row.height,
    price: row.price,
    bytes: row.bytes,
    ...(row.variation_of ? { variationOf: row.variation_of } : {}),
  };
}

export function toMediaItem(row: MediaRow, urls: UrlMaker): MediaItem {
  return {
    ...toGeneratedItem(row, urls),
    modelSlug: `${row.model}:${row.model_version}`,
    providerName: row.provider_name,
  };
}
