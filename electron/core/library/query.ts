import type { MediaKind, MediaSort } from '../../../shared/api/index.ts';

/** A local library query: the spec's `/media` filters plus local ones, paged by keyset. */
export interface LibraryQuery {
  media?: MediaKind;
  size?: string;
  /** Model id in base/model form, or with its version (base/model:version). */
  model?: string;
  /** Provider id/slug, or its display name. */
  provider?: string;
  /** Words of the prompt (each word matches as a prefix). */
  search?: string;
  sort?: MediaSort;
  downloaded?: boolean;
  favourite?: boolean;
  /** Items whose retention deadline falls within this many ms from now (and not yet lost). */
  expiringWithinMs?: number;
  /** Lost items (deleted by the service) are listed unless this is false. */
  includeLost?: boolean;
  collection?: string;
  /**
   * `takes`: what was generated; `inputs`: what the creator uploaded (start frames, extracted last
   * frames), which the service lists with the model `upload/file` and no prompt. Both when absent.
   */
  origin?: 'takes' | 'inputs';
  limit?: number;
  /** From the previous page's `nextCursor`. */
  cursor?: string | null;
}

/** The model the service gives uploaded files (docs/workflows.md, "The Library"): nothing generated them. */
export const INPUT_MODEL = 'upload/file';

export const LIBRARY_PAGE_DEFAULT = 50;
export const LIBRARY_PAGE_MAX = 500;

/** The keyset position: the rowid of the last item of the page (rowid order is time order). */
export function encodeCursor(rowid: number): string {
  return Buffer.from(JSON.stringify({ r: rowid })).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { r?: unknown };
    return typeof value.r === 'number' && Number.isSafeInteger(value.r) ? value.r : null;
  } catch {
    return null;
  }
}

/**
 * Words to an FTS5 query: each token quoted (so user text can never be FTS syntax) and matched
 * as a prefix; all must match. Returns null when nothing searchable is left.
 */
export function ftsQuery(search: string): string | null {
  const tokens = search
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((t) => t.length > 0)
    .slice(0, 16);
  if (tokens.length === 0) return null;
  return tokens.map((t) => `"${t.replaceAll('"', '""')}"*`).join(' ');
}

export interface BuiltQuery {
  sql: string;
  params: (string | number)[];
  limit: number;
}

/** The SQL of a library query; pure so that it is tested without a database. */
export function buildLibraryQuery(q: LibraryQuery, now: number): BuiltQuery {
  const where: string[] = [];
  const params: (string | number)[] = [];
  const limit = Math.min(LIBRARY_PAGE_MAX, Math.max(1, Math.floor(q.limit ?? LIBRARY_PAGE_DEFAULT)));
  if (q.media) {
    where.push('i.media = ?');
    params.push(q.media);
  }
  if (q.size) {
    where.push('i.size = ?');
    params.push(q.size.trim().toLowerCase());
  }
  if (q.model) {
    const m = q.model.trim().toLowerCase();
    where.push('(i.model = ? OR i.model_slug = ?)');
    params.push(m, m);
  }
  if (q.provider) {
    const p = q.provider.trim().toLowerCase();
    where.push('(i.provider = ? OR lower(i.provider_name) = ?)');
    params.push(p, p);
  }
  const match = q.search === undefined ? null : ftsQuery(q.search);
  if (match !== null) {
    where.unshift('library_fts MATCH ?');
    params.unshift(match);
  }
  // With a search, FTS5 drives (CROSS JOIN fixes it as the outer loop): it yields matches in rowid
  // (= time) order, so a page stops early instead of sorting every match.
  const key = match !== null ? 'f.rowid' : 'i.rowid';
  if (q.downloaded !== undefined)
    where.push(q.downloaded ? 'i.downloaded_path IS NOT NULL' : 'i.downloaded_path IS NULL');
  if (q.favourite !== undefined) where.push(q.favourite ? 'i.favourite = 1' : 'i.favourite = 0');
  if (q.expiringWithinMs !== undefined) {
    // A downloaded item is kept (an owner's download exempts it), whatever deadline the index last saw.
    where.push('i.lost_at IS NULL AND i.downloaded_path IS NULL AND i.deadline IS NOT NULL AND i.deadline <= ?');
    params.push(now + Math.max(0, q.expiringWithinMs));
  }
  if (q.origin) {
    where.push(q.origin === 'inputs' ? 'i.model = ?' : 'i.model <> ?');
    params.push(INPUT_MODEL);
  }
  if (q.includeLost === false) where.push('i.lost_at IS NULL');
  if (q.collection) {
    where.push('i.id IN (SELECT item_id FROM library_collection_items WHERE collection_id = ?)');
    params.push(q.collection);
  }
  const oldest = q.sort === 'oldest';
  const cursor = q.cursor ? decodeCursor(q.cursor) : null;
  if (cursor !== null) {
    where.push(`${key} ${oldest ? '>' : '<'} ?`);
    params.push(cursor);
  }
  const dir = oldest ? 'ASC' : 'DESC';
  const from = match !== null ? 'library_fts f CROSS JOIN library_items i ON i.rowid = f.rowid' : 'library_items i';
  const sql =
    `SELECT i.* FROM ${from}` +
    (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY ${key} ${dir} LIMIT ?`;
  params.push(limit + 1);
  return { sql, params, limit };
}
