import type { MediaRow, ResolvedMediaFilters } from './media-repo.ts';
import { planRead } from './media-list-sqlite.ts';
import type { Sql, SqlValue } from './sql/types.ts';

/**
 * `GET /media` on PostgreSQL (schema-v2.sql). Rows are found through media's own indexes in
 * (created_at, seq) order: media_user_created for an owner's items, media_public_created for
 * public ones, a trigram GIN index (pg_trgm) for prompt search. Search is a case-insensitive
 * substring match as on SQLite: `lower()` under the ICU root collation folds every script's case
 * whatever the database's own locale (a `C` database would fold ASCII only), and the index is on
 * that same expression so LIKE can use it. Searches of one or two characters have no trigram and
 * scan the visible rows, as they are rare and a prefix of a longer search the user is typing.
 *
 * `total` without a search sums per-combination counters kept by triggers (schema-v5.sql), as on
 * SQLite; with one it is a count over the same predicate (the trigram index). A page is
 * read from whichever end of the listing is nearer (planRead), so the last pages cost what the
 * first do. No per-process anchors as on SQLite: several nodes write, and nothing here would tell
 * one node that another changed the listing.
 */
export async function listMediaPostgres(
  db: Sql,
  f: ResolvedMediaFilters,
  limit: number,
  page: number,
): Promise<{ total: number; rows: MediaRow[] }> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  const add = (clause: string, ...values: SqlValue[]) => {
    where.push(clause);
    params.push(...values);
  };
  // PostgreSQL's text cannot hold U+0000, which the route uses for "matches nothing" (an unknown
  // provider, no viewer): no stored value has it, so such a filter is decided here.
  const none = (value: string | undefined) => value !== undefined && value.includes('\u0000');
  if ([f.user, f.size, f.model, f.modelVersion, f.providerId].some(none)) return { total: 0, rows: [] };
  if (f.user === f.viewer) add('user_id = ?', f.viewer);
  else if (f.user !== undefined) add('user_id = ? AND public = 1', f.user);
  else if (none(f.viewer)) add('public = 1');
  else add('(public = 1 OR user_id = ?)', f.viewer);
  if (f.media !== undefined) add('kind = ?', f.media);
  if (f.size !== undefined) add('size = ?', f.size);
  if (f.model !== undefined) add('model = ?', f.model);
  if (f.modelVersion !== undefined) add('model_version = ?', f.modelVersion);
  if (f.providerId !== undefined) add('provider_id = ?', f.providerId);
  const search = f.search ?? '';
  const searching = search.length > 0;
  if (searching) add(`${SEARCHED} LIKE ${PATTERN} ESCAPE '\\'`, likeEscape(search));
  const predicate = where.join(' AND ');
  const total = searching
    ? ((await db.get<{ n: number }>(`SELECT count(*) AS n FROM media WHERE ${predicate}`, ...params))?.n ?? 0)
    : await countWithoutSearch(db, f);
  const offset = page * limit;
  if (offset >= total) return { total, rows: [] };
  const count = Math.min(limit, total - offset);
  const lo = f.sort === 'oldest' ? offset : total - offset - count;
  const plan = planRead(undefined, total, lo, lo + count - 1);
  const direction = plan.ascending ? 'ASC' : 'DESC';
  const rows = await db.all<MediaRow>(
    `SELECT * FROM media WHERE ${predicate} ORDER BY created_at ${direction}, seq ${direction} LIMIT ? OFFSET ?`,
    ...params,
    count,
    plan.skip,
  );
  // Read toward the page from one end: oldest first from here on, then as asked.
  if (!plan.ascending) rows.reverse();
  return { total, rows: f.sort === 'oldest' ? rows : rows.reverse() };
}

/**
 * `total` without a search: sums of the per-combination counters (schema-v5.sql), as on SQLite
 * (media-list-sqlite.ts); the filters are the ones above, the U+0000 cases already decided.
 */
async function countWithoutSearch(db: Sql, f: ResolvedMediaFilters): Promise<number> {
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
    clauses.push(` AND ${column} = ?`);
    params.push(value);
  }
  const filters = clauses.join('');
  const sum = async (text: string, ...leading: SqlValue[]): Promise<number> =>
    (await db.get<{ n: number | null }>(text, ...leading, ...params))?.n ?? 0;
  if (f.user === f.viewer) return sum(`SELECT sum(n) AS n FROM media_counts WHERE user_id = ?${filters}`, f.viewer);
  if (f.user !== undefined)
    return sum(`SELECT sum(n) AS n FROM media_counts WHERE user_id = ? AND public = 1${filters}`, f.user);
  if (f.viewer.includes('\u0000')) return sum(`SELECT sum(n) AS n FROM media_public_counts WHERE TRUE${filters}`);
  // Everyone's public items, plus the viewer's own private ones, in one round trip.
  return (
    (
      await db.get<{ n: number | null }>(
        `SELECT (SELECT coalesce(sum(n), 0) FROM media_public_counts WHERE TRUE${filters})
           + (SELECT coalesce(sum(n), 0) FROM media_counts WHERE user_id = ? AND public = 0${filters}) AS n`,
        ...params,
        f.viewer,
        ...params,
      )
    )?.n ?? 0
  );
}

/** The prompt as search compares it (the GIN index of schema-v2.sql is on this exact expression). */
const SEARCHED = 'lower(prompt COLLATE "und-x-icu")';
const PATTERN = `('%' || lower(CAST(? AS text) COLLATE "und-x-icu") || '%')`;

/** LIKE's wildcards and its escape character as plain text. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
