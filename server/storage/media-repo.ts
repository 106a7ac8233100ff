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
}

export type NewMedia = Omit<MediaRow, 'seq' | 'files' | 'downloaded_at'> & { files: StoredFile[] };

export function insertMedia(db: Db, m: NewMedia): void {
  sql(
    db,
    `INSERT INTO media (id, user_id, key_id, kind, model, model_version, provider_id, provider_slug, provider_name, prompt, size,
       duration, width, height, mime, files, thumbnail, bytes, price, public, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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

/**
 * `GET /media` as SQL. Exported so the benchmark's bare server runs exactly the same statement.
 * `search` is a substring of the prompt, looked up in the trigram index and always bound as a
 * parameter, so no character of it is SQL or FTS syntax.
 */
export interface MediaQuerySql {
  where: string;
  params: Array<string | number>;
  order: string;
}

export interface ResolvedMediaFilters {
  viewer: string;
  user?: string;
  media?: MediaKind;
  size?: string;
  model?: string;
  modelVersion?: string;
  providerId?: string;
  search?: string;
  sort: MediaListQuery['sort'];
}

export function mediaQuerySql(f: ResolvedMediaFilters): MediaQuerySql {
  const clauses = ['(user_id = ? OR public = 1)'];
  const params: Array<string | number> = [f.viewer];
  if (f.user !== undefined) {
    clauses.push('user_id = ?');
    params.push(f.user);
  }
  if (f.media !== undefined) {
    clauses.push('kind = ?');
    params.push(f.media);
  }
  if (f.size !== undefined) {
    clauses.push('size = ?');
    params.push(f.size);
  }
  if (f.model !== undefined) {
    clauses.push('model = ?');
    params.push(f.model);
  }
  if (f.modelVersion !== undefined) {
    clauses.push('model_version = ?');
    params.push(f.modelVersion);
  }
  if (f.providerId !== undefined) {
    clauses.push('provider_id = ?');
    params.push(f.providerId);
  }
  if (f.search !== undefined && f.search.length > 0) {
    if ([...f.search].length >= 3) {
      // A quoted FTS5 phrase over trigrams is a case-insensitive substring match; doubling the
      // quotes makes every other character literal text.
      clauses.push('seq IN (SELECT rowid FROM media_fts WHERE media_fts MATCH ?)');
      params.push(`"${f.search.replace(/"/g, '""')}"`);
    } else {
      // Shorter than a trigram: LIKE with %, _ and \ escaped.
      clauses.push("seq IN (SELECT rowid FROM media_fts WHERE prompt LIKE ? ESCAPE '\\')");
      params.push(`%${f.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    }
  }
  const direction = f.sort === 'oldest' ? 'ASC' : 'DESC';
  return { where: clauses.join(' AND '), params, order: `created_at ${direction}, seq ${direction}` };
}

export function listMedia(
  db: Db,
  f: ResolvedMediaFilters,
  limit: number,
  page: number,
): { total: number; rows: MediaRow[] } {
  const q = mediaQuerySql(f);
  const total = (sql(db, `SELECT count(*) AS n FROM media WHERE ${q.where}`).get(...q.params) as { n: number }).n;
  const offset = page * limit;
  // Past the end there is nothing to read: skip the query rather than step over every row.
  const rows =
    offset >= total
      ? []
      : (sql(
          db,
          `SELECT * FROM media INDEXED BY media_listing WHERE ${q.where} ORDER BY ${q.order} LIMIT ? OFFSET ?`,
        ).all(...q.params, limit, offset) as unknown as MediaRow[]);
  return { total, rows };
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
  };
}

export function toMediaItem(row: MediaRow, urls: UrlMaker): MediaItem {
  return {
    ...toGeneratedItem(row, urls),
    modelSlug: `${row.model}:${row.model_version}`,
    providerName: row.provider_name,
  };
}
