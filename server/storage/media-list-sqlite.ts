import type { SqliteSql } from './sql/sqlite.ts';
import type { MediaRow, ResolvedMediaFilters } from './media-rows.ts';

/**
 * `GET /media` on SQLite: FTS5 and counters kept by triggers (db.ts, version 3). It runs
 * synchronously on the connection (sqliteExclusive), so a count and its page see one state.
 */

/** A quoted FTS5 string: doubling the quotes makes every other character literal text. */
function ftsString(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * The filters as one FTS5 expression over media_find, or over media_grams for a search under
 * three characters (db.ts, version 3); null when nothing can match. Every value is a token or a
 * quoted string, so no character of the request is FTS syntax.
 */
function findExpression(db: SqliteSql, f: ResolvedMediaFilters): { table: string; match: string } | null {
  const search = f.search !== undefined && f.search.length > 0 ? f.search : undefined;
  const searchLength = search === undefined ? 0 : [...search].length;
  const table = search !== undefined && searchLength < 3 ? 'media_grams' : 'media_find';
  // media_grams keeps no positions, so it cannot filter by column; it needs none, as no window of
  // its grams is a tag token (every window holds a U+FFFF).
  const column = (name: string) => (table === 'media_find' ? `${name} : ` : '');
  /** The token of a filter value, or null when no item ever had that value. */
  const term = (field: string, value: string): string | null => {
    const row = db.statement('SELECT token FROM media_terms WHERE field = ? AND value = ?').get(field, value) as
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
function countWithoutSearch(db: SqliteSql, f: ResolvedMediaFilters): number {
  const { text: filters, params } = filterClauses(f);
  const sum = (text: string, ...leading: Array<string | number>): number =>
    (db.statement(text).get(...leading, ...params) as { n: number | null }).n ?? 0;
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
const listingCaches = new WeakMap<SqliteSql, ListingCache>();

function listingCache(db: SqliteSql): ListingCache {
  const version = (db.statement('SELECT version FROM media_version').get() as { version: number }).version;
  let cache = listingCaches.get(db);
  if (!cache || cache.version !== version) {
    cache = { version, totals: new Map(), anchors: new Map() };
    listingCaches.set(db, cache);
  }
  return cache;
}

/** Sets `key` in a map that keeps at most `max` entries (the oldest set goes first). */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value as K);
  map.set(key, value);
}

function countSearch(cache: ListingCache, db: SqliteSql, table: string, match: string): number {
  const key = `${table} ${match}`;
  let total = cache.totals.get(key);
  if (total === undefined) {
    total = (db.statement(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(match) as { n: number }).n;
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

/** Where a page's read starts: a bound (an ord here, a row's order key on PostgreSQL) or none, and the entries to skip from it. */
export interface ReadPlan<B = number> {
  ascending: boolean;
  bound?: B;
  skip: number;
}

/**
 * The cheapest way to read positions [lo, hi] (oldest first) of a listing of `total`: from the
 * oldest end, from the newest end, or from the nearest anchor on either side.
 */
export function planRead<B = number>(
  anchors: Map<number, B> | undefined,
  total: number,
  lo: number,
  hi: number,
): ReadPlan<B> {
  let best: ReadPlan<B> =
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
export function listMediaSqlite(
  db: SqliteSql,
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
    const all = (db.statement('SELECT sum(n) AS n FROM media_counts').get() as { n: number | null }).n ?? total;
    if (anchored.bound !== undefined && ((anchored.skip + count) * all) / total <= ANCHORED_WALK_MAX) plan = anchored;
  }
  const direction = plan.ascending ? 'ASC' : 'DESC';
  let rows: MediaRow[];
  if (plan.bound === undefined) {
    rows = db
      .statement(
        `SELECT media.* FROM (SELECT rowid AS ord FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid ${direction} LIMIT ? OFFSET ?) AS found
       JOIN media ON media.ord = found.ord ORDER BY media.ord ${direction}`,
      )
      .all(match, count, plan.skip) as unknown as MediaRow[];
  } else {
    const visible = visibilityClause(f);
    const filters = filterClauses(f);
    rows = db
      .statement(
        // INDEXED BY: the planner would otherwise take an owner's index and sort every row it holds.
        `SELECT * FROM media INDEXED BY media_ord WHERE ord ${plan.ascending ? '>=' : '<='} ? AND ${visible.text}${filters.text}
       ORDER BY ord ${direction} LIMIT ? OFFSET ?`,
      )
      .all(plan.bound, ...visible.params, ...filters.params, count, plan.skip) as unknown as MediaRow[];
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
