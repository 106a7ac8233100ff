/**
 * `POST /media/:id/retain` (docs/api.md, "Which downloads exempt an item from retention"): the
 * owner moves an item's deadline. The rule and its write live here, in the generation layer,
 * so that the HTTP layer writes nothing itself (docs/architecture.md, "The service's layers").
 */
import type { RetainRequest } from '../../shared/api/index.ts';
import { ApiError } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import { getMedia } from '../storage/media-repo.ts';
import type { MediaRow } from '../storage/media-rows.ts';

const DAY_MS = 86_400_000;

/**
 * The item's new deadline: none (`forever`), or `days` past the later of its deadline and now, so
 * retaining never shortens what is left.
 */
export function retainedUntil(expiresAt: number | null, now: number, body: RetainRequest): number | null {
  if (body.forever !== true && body.days === undefined)
    throw new ApiError('invalid_request_error', 'send {"days": N} or {"forever": true}');
  return body.forever === true ? null : Math.max(expiresAt ?? now, now) + (body.days ?? 0) * DAY_MS;
}

/** Writes the owner's item's new deadline; answers the row as stored now. */
export async function retainItem(db: Db, row: MediaRow, body: RetainRequest, now: number): Promise<MediaRow> {
  await db.run('UPDATE media SET expires_at = ? WHERE id = ?', retainedUntil(row.expires_at, now, body), row.id);
  return (await getMedia(db, row.id)) ?? row;
}
