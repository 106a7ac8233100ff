import type { MediaKind, MediaListQuery } from '../../shared/api/index.ts';

/**
 * The `media` table's row and the filters a listing takes: kept apart from media-repo.ts so that
 * the two listing engines (media-list-sqlite.ts, media-list-postgres.ts) read them without
 * importing the repository that dispatches to them.
 */

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
