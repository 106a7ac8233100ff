import type { GeneratedItem, MediaItem } from '../../shared/api/index.ts';
import type { Db } from './db.ts';
import type { MediaRow, ResolvedMediaFilters, StoredFile } from './media-rows.ts';
import { listMediaPostgres } from './media-list-postgres.ts';
import { listMediaSqlite } from './media-list-sqlite.ts';

export { planRead } from './media-list-sqlite.ts';
import { sqliteExclusive } from './sql/sqlite.ts';

export type NewMedia = Omit<MediaRow, 'seq' | 'files' | 'downloaded_at' | 'ord'> & { files: StoredFile[] };

export async function insertMedia(db: Db, m: NewMedia): Promise<void> {
  // variation_of is named only when set: the statement also serves databases from before version 5.
  const lineage = m.variation_of !== undefined && m.variation_of !== null;
  await db.run(
    `INSERT INTO media (id, user_id, key_id, kind, model, model_version, provider_id, provider_slug, provider_name, prompt, size,
       duration, width, height, mime, files, thumbnail, bytes, price, public, created_at, expires_at${lineage ? ', variation_of' : ''})
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${lineage ? ', ?' : ''})`,
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

export function getMedia(db: Db, id: string): Promise<MediaRow | undefined> {
  return db.get<MediaRow>('SELECT * FROM media WHERE id = ?', id);
}

export async function mediaExists(db: Db, id: string): Promise<boolean> {
  return (await db.get('SELECT 1 AS x FROM media WHERE id = ?', id)) !== undefined;
}

export function storedFiles(row: MediaRow): StoredFile[] {
  return JSON.parse(row.files) as StoredFile[];
}

/**
 * Whether a search holds a character no prompt can be found by: FTS5's query syntax cannot express
 * U+0000, and U+FFFF pads the index's one- and two-character grams (db.ts, version 3). The route
 * answers 400 for such a search.
 */
export function unsearchable(search: string): boolean {
  return search.includes('\u0000') || search.includes('\uffff');
}

/**
 * `GET /media`: the total number of matching items and one page of them, in created order, newest
 * first unless `sort` is 'oldest'. Each database has its own way of finding and counting them.
 */
export function listMedia(
  db: Db,
  f: ResolvedMediaFilters,
  limit: number,
  page: number,
): Promise<{ total: number; rows: MediaRow[] }> {
  if (db.dialect === 'postgres') return listMediaPostgres(db, f, limit, page);
  return sqliteExclusive(db, (sqlite) => listMediaSqlite(sqlite, f, limit, page));
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
