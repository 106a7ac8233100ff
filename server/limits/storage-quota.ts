import type { MediaKind, TierLimits } from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';
import { rateLimitError } from '../errors.ts';
import type { ApiError } from '../errors.ts';
import { TYPICAL_RENDER_SECONDS } from './concurrency.ts';

/**
 * The storage quota (spec, "Storage by tier"). What counts against it: stored items, the declared
 * sizes of upload tickets not yet completed, and the estimated size of generations still running.
 * A new upload or generation is admitted only when all of that plus its own (declared or
 * estimated) size stays within the limit, so the quota cannot be overshot by the last item.
 */

/**
 * An upper bound on the bytes a generation stores, known before it runs (the item's files come
 * out of the pipeline, so they are bounded by what the pipeline writes for that size):
 * - video, per item: an MP4 and a WebM, each at most 1 bit per pixel per frame up to 640×480,
 *   growing with the square root of the area beyond that (bigger frames compress better); frames
 *   at 30 fps, the highest any provider renders. Measured Local renders stay at 2× (360p) to 5×
 *   (1080p) below it. Plus the sound a clip may carry: the MP4's AAC (copied from the master up to
 *   320 kb/s, else encoded at 128 kb/s) and the WebM's Opus (96 kb/s VBR), at most 480 kb/s together.
 * - image, per item: a PNG at most 4 bytes per pixel (raw RGBA) plus row filters and headers, and
 *   a lossy WebP at most 1.5 bytes per pixel.
 * - each item's JPEG thumbnail (≤ 480 pixels wide) at most 1 byte per pixel.
 * The estimate is reserved while the generation runs and released when its items are stored.
 */
export interface GenerationSize {
  kind: MediaKind;
  width: number;
  height: number;
  /** Seconds (0 for images). */
  duration: number;
  count: number;
}

const ESTIMATE_FPS = 30;
const BASE_AREA = 640 * 480;
const HEADER_BYTES = 4_096;
const THUMBNAIL_WIDTH = 480;
/** AAC ≤ 320 kb/s + Opus ≤ 160 kb/s (its 96 kb/s target, with VBR headroom), in bytes. */
const AUDIO_BYTES_PER_SECOND = (320_000 + 160_000) / 8;

export function estimateGenerationBytes(g: GenerationSize): number {
  const area = g.width * g.height;
  const thumbWidth = Math.min(THUMBNAIL_WIDTH, g.width);
  const thumbnail = thumbWidth * Math.ceil((g.height * thumbWidth) / g.width) + HEADER_BYTES;
  let perItem: number;
  if (g.kind === 'video') {
    const bitsPerFrame = area <= BASE_AREA ? area : BASE_AREA * Math.sqrt(area / BASE_AREA);
    const frames = Math.ceil(g.duration * ESTIMATE_FPS);
    const perFormat = Math.ceil((bitsPerFrame * frames) / 8) + HEADER_BYTES;
    perItem = 2 * perFormat + Math.ceil(g.duration * AUDIO_BYTES_PER_SECOND) + thumbnail;
  } else {
    const png = area * 4 + g.height + HEADER_BYTES;
    const webp = Math.ceil(area * 1.5) + HEADER_BYTES;
    perItem = png + webp + thumbnail;
  }
  return perItem * g.count;
}

/**
 * Generations running now, with the bytes each has reserved. In memory: a generation does not
 * outlive its process, so neither does its reservation.
 */
export class StorageReservations {
  private readonly running = new Map<string, Set<{ bytes: number; kind: MediaKind }>>();

  /** Reserves `bytes` for `user`; the returned release is idempotent. */
  reserve(user: string, kind: MediaKind, bytes: number): () => void {
    let set = this.running.get(user);
    if (!set) {
      set = new Set();
      this.running.set(user, set);
    }
    const entry = { bytes, kind };
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.running.get(user) === set) this.running.delete(user);
    };
  }

  bytes(user: string): number {
    let n = 0;
    for (const e of this.running.get(user) ?? []) n += e.bytes;
    return n;
  }

  list(user: string): ReadonlyArray<{ bytes: number; kind: MediaKind }> {
    return [...(this.running.get(user) ?? [])];
  }
}

/** How long a received upload waits for its completion after its URL expires. */
export const RECEIVED_UPLOAD_KEEP_MS = 86_400_000;

/**
 * Upload tickets that still hold space, and when each lets go of it unless completed first: a
 * pending ticket when its URL expires, a received file when retention's sweep removes it.
 */
const UPLOAD_HOLDS_SQL = `SELECT size, CASE state WHEN 'received' THEN expires_at + ${RECEIVED_UPLOAD_KEEP_MS} ELSE expires_at END AS release_at
  FROM uploads WHERE user_id = ? AND state != 'completed'
  AND (expires_at > ? OR (state = 'received' AND expires_at + ${RECEIVED_UPLOAD_KEEP_MS} > ?))`;

/** Declared bytes of this user's uploads that are not yet items. */
async function uploadReservedBytes(db: Db, user: string, now: number): Promise<number> {
  const row = (await db.get<{
    n: number;
  }>(`SELECT COALESCE(SUM(size), 0) AS n FROM (${UPLOAD_HOLDS_SQL}) AS holds`, user, now, now))!;
  return row.n;
}

export interface QuotaContext {
  db: Db;
  now: number;
  reservations: StorageReservations;
}

/**
 * Where a user stands: stored bytes and bytes reserved by uploads and running generations. An item
 * past its deadline no longer counts: retention's next sweep deletes it, and a client told to
 * retry at that deadline must not be refused again while the sweep is pending.
 */
export async function storageStanding(q: QuotaContext, user: string): Promise<{ used: number; reserved: number }> {
  const stored = (await q.db.get<{ n: number }>(
    'SELECT COALESCE(SUM(bytes), 0) AS n FROM media WHERE user_id = ? AND NOT (expires_at IS NOT NULL AND expires_at <= ? AND downloaded_at IS NULL)',
    user,
    q.now,
  ))!;
  return {
    used: stored.n,
    reserved: (await uploadReservedBytes(q.db, user, q.now)) + q.reservations.bytes(user),
  };
}

/**
 * When nothing scheduled will free space, the spec still wants a retry_after: this is when to look
 * again (the operator may have raised the limit), and the message says nothing will free.
 */
export const QUOTA_RECHECK_SECONDS = 86_400;

/**
 * Admits `bytes` more for `user`, or throws the 429 to answer. Its retry_after is honest: the time
 * until enough space frees on its own (item expiries, upload tickets lapsing, running generations
 * ending, taken in time order until they cover the shortfall), or, when kept and downloaded
 * items fill the quota so that nothing will free, a message that says so.
 */
export async function checkStorageQuota(
  q: QuotaContext,
  user: string,
  limits: TierLimits,
  need: { bytes: number; what: string; reserved?: boolean },
): Promise<void> {
  const standing = await storageStanding(q, user);
  const used = standing.used;
  // `reserved: true`: the caller reserved `need.bytes` before this check (so that no other request
  // can pass on the same space while it reads the database), and they count once, as the need.
  const reserved = standing.reserved - (need.reserved === true ? need.bytes : 0);
  const limit = limits.storageBytes;
  if (used + reserved + need.bytes <= limit) return;
  throw await quotaError(q, user, limit, used, reserved, need);
}

async function quotaError(
  q: QuotaContext,
  user: string,
  limit: number,
  used: number,
  reserved: number,
  need: { bytes: number; what: string },
): Promise<ApiError> {
  const standing =
    `${need.what} needs ${bytes(need.bytes)}, and the storage quota of ${bytes(limit)} has ` +
    `${Math.max(0, limit - used - reserved)} left (${used} stored, ${reserved} reserved)`;
  if (need.bytes > limit) {
    return rateLimitError(`${standing}; it is larger than the whole quota and will never fit`, QUOTA_RECHECK_SECONDS);
  }
  const freedAt = await timeUntilFreed(q, user, used + reserved + need.bytes - limit);
  if (freedAt === null) {
    return rateLimitError(
      `${standing}. Nothing will free on its own: the stored items that fill it were downloaded or are kept, ` +
        'and retention does not delete those',
      QUOTA_RECHECK_SECONDS,
    );
  }
  return rateLimitError(
    `${standing}; retention and lapsing reservations free enough in time`,
    (freedAt - q.now) / 1000,
  );
}

/** The moment (ms) by which at least `shortfall` bytes free on their own, or null if they never do. */
async function timeUntilFreed(q: QuotaContext, user: string, shortfall: number): Promise<number | null> {
  const events: Array<{ at: number; bytes: number }> = [];
  // A running generation gives back its reservation when it ends; how soon is not known, so the
  // typical render time is the next look (its items are stored and counted from then on).
  for (const r of q.reservations.list(user)) {
    events.push({ at: q.now + TYPICAL_RENDER_SECONDS[r.kind] * 1000, bytes: r.bytes });
  }
  for (const u of await q.db.all<{ size: number; release_at: number }>(UPLOAD_HOLDS_SQL, user, q.now, q.now)) {
    events.push({ at: u.release_at, bytes: u.size });
  }
  events.sort((a, b) => a.at - b.at);
  // Items expire in order, merged with the events above until they cover the shortfall.
  const expiring = (
    await q.db.all<{ at: number; bytes: number }>(
      'SELECT expires_at AS at, bytes FROM media WHERE user_id = ? AND expires_at > ? AND downloaded_at IS NULL ORDER BY expires_at',
      user,
      q.now,
    )
  ).values();
  let freed = 0;
  let next = expiring.next();
  let i = 0;
  while (i < events.length || !next.done) {
    const item = next.done ? null : next.value;
    const event = events[i];
    let step: { at: number; bytes: number };
    if (event && (!item || event.at <= item.at)) {
      step = event;
      i++;
    } else {
      step = item as { at: number; bytes: number };
      next = expiring.next();
    }
    freed += step.bytes;
    if (freed >= shortfall) {
      return Math.max(step.at, q.now + 1000);
    }
  }
  return null;
}

function bytes(n: number): string {
  return `${n} byte${n === 1 ? '' : 's'}`;
}
