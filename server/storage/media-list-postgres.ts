import type { MediaRow, ResolvedMediaFilters } from './media-rows.ts';
import { planRead, remember } from './media-list-sqlite.ts';
import { promptSample, wordsToIndex } from './media-search-words.ts';
import type { Sql, SqlValue } from './sql/types.ts';

/**
 * `GET /media` on PostgreSQL (schema-v2.sql, schema-v5.sql, schema-v7.sql, schema-v11.sql). Rows are found through
 * media's own indexes in (created_at, seq) order: media_user_created for an owner's items,
 * media_created or media_public_created for the rest, a trigram GIN index (pg_trgm) for prompt
 * search. Search is a case-insensitive substring match as on SQLite: `lower()` under the ICU root
 * collation folds every script's case whatever the database's own locale (a `C` database would
 * fold ASCII only), and the index is on that same expression so LIKE can use it. Searches of one
 * or two characters have no trigram: a GIN index of the prompt's characters and pairs of
 * characters finds them (schema-v7.sql), as media_grams does on SQLite.
 *
 * `total` without a search sums per-combination counters kept by triggers (schema-v5.sql), as on
 * SQLite; with one it is a count over the same predicate. What SQLite remembers per data version
 * (search totals, page anchors: media-list-sqlite.ts) is remembered here per listing version: the
 * sum of `changes` over the counter rows the listing's items lie in (schema-v7.sql), read in the
 * same statement as the counters, so it costs no round trip. Any write on any node that could
 * change the listing raises it, so nothing remembered is ever served stale; each node learns on
 * its own. A remembered total spares a count of every match (33 ms for a common word among
 * 100,000 items); an anchor spares stepping over OFFSET rows one by one on a deep page (10 ms in
 * the middle of 60,000).
 */
export async function listMediaPostgres(
  db: Sql,
  f: ResolvedMediaFilters,
  limit: number,
  page: number,
): Promise<{ total: number; rows: MediaRow[] }> {
  // PostgreSQL's text cannot hold U+0000, which the route uses for "matches nothing" (an unknown
  // provider, no viewer): no stored value has it, so such a filter is decided here.
  const none = (value: string | undefined) => value !== undefined && value.includes('\u0000');
  if ([f.user, f.size, f.model, f.modelVersion, f.providerId].some(none)) return { total: 0, rows: [] };
  const visibility = visibilityOf(f, none(f.viewer));
  const filters = filterClauses(f);
  const search = f.search ?? '';
  const searching = search.length > 0;
  const searchedBy = searching ? await searchClauses(db, search) : { clauses: [], params: [] };
  const where = [visibility.text, ...filters.clauses, ...searchedBy.clauses];
  const params: SqlValue[] = [...visibility.params, ...filters.params, ...searchedBy.params];
  const predicate = where.join(' AND ');
  // One or two characters: the grams index (schema-v7.sql) finds the candidates for the count.
  const grams = searching && [...search].length < 3;
  const gramsClause = grams ? ` AND ${GRAMS}` : '';
  const gramsParams = grams ? [search, search] : [];

  const key = JSON.stringify([visibility.params, visibility.text, filters.params, filters.clauses, search]);
  const cache = listingsOf(db);
  const known = cache.get(key);
  const counters = countersQuery(visibility.counted, filters);
  const offset = page * limit;
  const sortDirection = f.sort === 'oldest' ? 'ASC' : 'DESC';
  const query: ListingQuery = { predicate, params, grams, gramsClause, gramsParams, limit, offset, sort: f.sort };

  type Found = { n: number; v: number; found?: number };
  let found: Found | undefined;
  // A listing this node knows (its total at a version): the version and the page in one statement,
  // the page read as if the version had not moved, which it usually has not. When it has, the
  // page is thrown away and read again (below) with the new counts: one round trip in the usual
  // case, two as before otherwise.
  const knownTotal = searching ? known?.total : known?.n;
  if (known !== undefined && knownTotal !== undefined && known.n !== undefined && offset < knownTotal) {
    const read = pageRead(query, known, knownTotal, known.n);
    const joined = await db.all<MediaRow & { listing_n: number; listing_v: number }>(
      `SELECT c.n AS listing_n, c.v AS listing_v, m.*
       FROM (${counters.text}) AS c LEFT JOIN LATERAL (${read.text}) AS m ON TRUE
       ORDER BY m.${read.orderBy.replace(', seq', ', m.seq')}`,
      ...counters.params,
      ...read.params,
    );
    const head = joined[0];
    if (head === undefined) throw new Error('GET /media: the counters answered no row');
    if (head.listing_v === known.version) {
      remember(cache, key, known, KEPT);
      const rows: MediaRow[] = [];
      for (const { listing_n: _n, listing_v: _v, ...row } of joined) if (row.seq !== null) rows.push(row);
      return answer(query, known, read, rows, knownTotal);
    }
    found = { n: head.listing_n, v: head.listing_v };
  }
  // The counters first when a search's total is remembered: a statement that cheap to plan, and
  // usually the version has not moved.
  if (found === undefined && (!searching || known?.total !== undefined))
    found = await db.get<Found>(counters.text, ...counters.params);
  /** The page's rows when the search below read them, oldest first. */
  let searched: MediaRow[] | undefined;
  if (searching && (found === undefined || found.v !== known?.version)) {
    // The matches, found once (the CTE is materialized) for both the total and the page's rows,
    // in the order asked: the trigram or grams index is scanned once. The version comes from the
    // same statement, so from the same snapshot as the count, and so do the page's rows.
    const joined = await db.all<MediaRow & { listing_n: number; listing_v: number; listing_found: number }>(
      `WITH found AS MATERIALIZED (SELECT seq, created_at FROM media WHERE ${predicate}${gramsClause}),
         page AS (SELECT seq FROM found ORDER BY created_at ${sortDirection}, seq ${sortDirection} LIMIT ? OFFSET ?)
       SELECT c.n AS listing_n, c.v AS listing_v, (SELECT count(*) FROM found) AS listing_found, m.*
       FROM (${counters.text}) AS c
         LEFT JOIN LATERAL (SELECT * FROM media WHERE seq IN (SELECT seq FROM page)) AS m ON TRUE
       ORDER BY m.created_at, m.seq`,
      ...params,
      ...gramsParams,
      limit,
      offset,
      ...counters.params,
    );
    const head = joined[0];
    if (head === undefined) throw new Error('GET /media: the counters answered no row');
    found = { n: head.listing_n, v: head.listing_v, found: head.listing_found };
    searched = [];
    for (const { listing_n: _n, listing_v: _v, listing_found: _f, ...row } of joined)
      if (row.seq !== null) searched.push(row);
  }
  if (found === undefined) throw new Error('GET /media: the counters answered no row');
  const version = found.v;
  let listing = known;
  if (listing === undefined || listing.version !== version) listing = { version, anchors: new Map() };
  // Least recently used goes first: a run of one-off searches must not push out a listing that
  // clients keep paging through.
  remember(cache, key, listing, KEPT);
  listing.n = found.n;
  const total = searching ? (found.found ?? known?.total) : found.n;
  if (total === undefined) throw new Error('GET /media: no total for a listing');
  if (searching) listing.total = total;

  if (offset >= total) return { total, rows: [] };
  if (searched !== undefined) return { total, rows: f.sort === 'oldest' ? searched : searched.reverse() };
  const read = pageRead(query, listing, total, found.n);
  return answer(query, listing, read, await db.all<MediaRow>(read.text, ...read.params), total);
}

/**
 * A search as SQL on media. With words most prompts contain, the index looks for its rare words
 * only, and the whole search is checked on the rows they find (media-search-words.ts).
 */
async function searchClauses(db: Sql, search: string): Promise<{ clauses: string[]; params: SqlValue[] }> {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  const words = wordsToIndex(search, await promptSample(db));
  if (words === null) {
    clauses.push(`${SEARCHED} LIKE ${PATTERN} ESCAPE '\\'`);
    params.push(likeEscape(search));
  } else {
    for (const word of words) {
      clauses.push(`${SEARCHED} LIKE ${PATTERN} ESCAPE '\\'`);
      params.push(likeEscape(word));
    }
    clauses.push(`strpos(${SEARCHED}, ${LOWERED}) > 0`);
    params.push(search);
  }
  return { clauses, params };
}

/** A listing's query as listMediaPostgres builds it: what a page's read is made of. */
interface ListingQuery {
  /** Visibility, filters and search, as SQL on media, and its parameters. */
  predicate: string;
  params: SqlValue[];
  /** A search of one or two characters: the grams index (schema-v7.sql) can find its matches. */
  grams: boolean;
  gramsClause: string;
  gramsParams: SqlValue[];
  limit: number;
  offset: number;
  sort: ResolvedMediaFilters['sort'];
}

/** A page's read: its statement, and the positions (counted oldest first) it covers. */
interface PageRead {
  count: number;
  lo: number;
  hi: number;
  ascending: boolean;
  text: string;
  orderBy: string;
  params: SqlValue[];
}

/** The page's read: its rows, oldest first, from whichever end or anchor is nearest. */
function pageRead(q: ListingQuery, listing: Listing | undefined, total: number, visible: number): PageRead {
  const count = Math.min(q.limit, total - q.offset);
  // The page as positions counted oldest first.
  const lo = q.sort === 'oldest' ? q.offset : total - q.offset - count;
  const hi = lo + count - 1;
  const plan = planRead(listing?.anchors, total, lo, hi);
  const direction = plan.ascending ? 'ASC' : 'DESC';
  const bound = plan.bound === undefined ? '' : ` AND (created_at, seq) ${plan.ascending ? '>=' : '<='} (?, ?)`;
  // A page of a short search walks the listing's order index, checking LIKE row by row, for
  // about (skip + count) × visible / total rows; through the grams index it reads every match
  // and sorts them. The planner cannot tell which is shorter (it has no statistics on the
  // grams); the total tells: the grams when the walk would pass more than twice as many rows
  // as there are matches.
  const viaGrams = q.grams && (plan.skip + count) * visible > 2 * total * total;
  return {
    count,
    lo,
    hi,
    ascending: plan.ascending,
    text: `SELECT * FROM media WHERE ${q.predicate}${viaGrams ? q.gramsClause : ''}${bound}
       ORDER BY created_at ${direction}, seq ${direction} LIMIT ? OFFSET ?`,
    orderBy: `created_at ${direction}, seq ${direction}`,
    params: [
      ...q.params,
      ...(viaGrams ? q.gramsParams : []),
      ...(plan.bound === undefined ? [] : plan.bound),
      count,
      plan.skip,
    ],
  };
}

/** The page's rows as read: oldest first, both ends remembered as anchors of `listing`'s version. */
function answer(
  q: ListingQuery,
  listing: Listing,
  read: PageRead,
  rows: MediaRow[],
  total: number,
): { total: number; rows: MediaRow[] } {
  if (!read.ascending) rows.reverse();
  // Both ends of a whole page become anchors of this version. The page may have been read in a
  // later snapshot than the version: if a write came between, no later read sees this version
  // again, so its anchors are never used.
  const first = rows[0];
  const last = rows.at(-1);
  if (first && last && rows.length === read.count) {
    remember(listing.anchors, read.lo, [first.created_at, first.seq], ANCHORS_PER_LISTING);
    remember(listing.anchors, read.hi, [last.created_at, last.seq], ANCHORS_PER_LISTING);
  }
  return { total, rows: q.sort === 'oldest' ? rows : rows.reverse() };
}

/** A position's row as (created_at, seq), the listing's order key. */
type Anchor = [number, number];

/** What one node learnt of one listing at one version (see listMediaPostgres). */
interface Listing {
  version: number;
  /** The listing's items without its search, from the counters: its total when it has no search. */
  n?: number;
  /** The search's total. */
  total?: number;
  anchors: Map<number, Anchor>;
}
/**
 * Listings remembered per node: each holds a total and at most ANCHORS_PER_LISTING anchors (well
 * under 10 kB), so this bounds the memory to a few megabytes. More than SQLite's 256: a miss
 * here counts every match through the heap (33 ms for a common word among 100,000 items, a scan
 * of every visible row for one or two letters), and a run of one-off searches of a few hundred
 * must not evict what clients page through.
 */
const KEPT = 1024;
const ANCHORS_PER_LISTING = 64;
const listings = new WeakMap<Sql, Map<string, Listing>>();

function listingsOf(db: Sql): Map<string, Listing> {
  let cache = listings.get(db);
  if (cache === undefined) {
    cache = new Map();
    listings.set(db, cache);
  }
  return cache;
}

/**
 * Who may see what, as SQL on media, and which counter rows hold those items: an owner's own
 * (`own`), another owner's public ones (`user`), every public one (`public`, no viewer), or the
 * public ones plus the viewer's own private ones (`visible`).
 */
function visibilityOf(
  f: ResolvedMediaFilters,
  noViewer: boolean,
): { text: string; params: SqlValue[]; counted: Counted } {
  if (f.user === f.viewer) return { text: 'user_id = ?', params: [f.viewer], counted: { own: f.viewer } };
  if (f.user !== undefined) return { text: 'user_id = ? AND public = 1', params: [f.user], counted: { user: f.user } };
  if (noViewer) return { text: 'public = 1', params: [], counted: {} };
  return { text: '(public = 1 OR user_id = ?)', params: [f.viewer], counted: { viewer: f.viewer } };
}
type Counted = { own: string } | { user: string } | { viewer: string } | Record<string, never>;

/** The filters other than visibility and search, as SQL on media (the counters have the same columns). */
function filterClauses(f: ResolvedMediaFilters): { clauses: string[]; params: SqlValue[] } {
  const clauses: string[] = [];
  const params: SqlValue[] = [];
  for (const [column, value] of [
    ['kind', f.media],
    ['size', f.size],
    ['model', f.model],
    ['model_version', f.modelVersion],
    ['provider_id', f.providerId],
  ] as const) {
    if (value === undefined) continue;
    clauses.push(`${column} = ?`);
    params.push(value);
  }
  return { clauses, params };
}

/**
 * One row (n, v): the listing's items without a search (`n`, its total then) and its version
 * (`v`), from the counter rows its items lie in (schema-v5.sql, schema-v7.sql).
 */
function countersQuery(
  counted: Counted,
  filters: { clauses: string[]; params: SqlValue[] },
): { text: string; params: SqlValue[] } {
  const and = filters.clauses.map((c) => ` AND ${c}`).join('');
  const sums = 'coalesce(sum(n), 0) AS n, coalesce(sum(changes), 0) AS v';
  if ('own' in counted)
    return {
      text: `SELECT ${sums} FROM media_counts WHERE user_id = ?${and}`,
      params: [counted.own, ...filters.params],
    };
  if ('user' in counted)
    return {
      text: `SELECT ${sums} FROM media_counts WHERE user_id = ? AND public = 1${and}`,
      params: [counted.user, ...filters.params],
    };
  if (!('viewer' in counted))
    return { text: `SELECT ${sums} FROM media_public_counts WHERE TRUE${and}`, params: filters.params };
  // Everyone's public items, plus the viewer's own private ones.
  return {
    text: `SELECT p.n + o.n AS n, p.v + o.v AS v
      FROM (SELECT ${sums} FROM media_public_counts WHERE TRUE${and}) AS p,
           (SELECT ${sums} FROM media_counts WHERE user_id = ? AND public = 0${and}) AS o`,
    params: [...filters.params, counted.viewer, ...filters.params],
  };
}

/** The prompt as search compares it (the GIN index of schema-v2.sql is on this exact expression). */
const SEARCHED = 'lower(prompt COLLATE "und-x-icu")';
const LOWERED = 'lower(CAST(? AS text) COLLATE "und-x-icu")';
const PATTERN = `('%' || ${LOWERED} || '%')`;

/**
 * A search of at most two characters once lowered, as one element of the prompt's grams (the
 * index of schema-v7.sql is on this exact expression); longer ones are left to LIKE alone. Its
 * two parameters are the search, unescaped.
 */
const GRAMS = `(length(lower(CAST(? AS text) COLLATE "und-x-icu")) > 2
  OR media_prompt_grams(${SEARCHED}) @> ARRAY[lower(CAST(? AS text) COLLATE "und-x-icu")])`;

/** LIKE's wildcards and its escape character as plain text. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
