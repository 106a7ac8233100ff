import type { MediaKind, TierLimits } from '../../shared/api/index.ts';
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/db.ts';
import { lockKey } from '../storage/sql/dialect.ts';
import type { Sql } from '../storage/sql/types.ts';
import { rateLimitError } from '../errors.ts';
import type { ApiError } from '../errors.ts';
import { TYPICAL_RENDER_SECONDS } from './concurrency.ts';
import { LeasedRows } from './leased-rows.ts';

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
 * Bytes reserved by generations running now, on every node: a row per generation in
 * `storage_reservations` (SQLite version 9, PostgreSQL version 8) with a lease its node renews while
 * the generation runs, as the concurrency slots are (leased-rows.ts). So the quota counts every
 * node's running generations, and a node that dies, or a release the database missed, frees its
 * reservation when the lease lapses (SLOT_LEASE_MS). Leases are wall-clock time, never the service's (test) clock.
 */
export interface StorageReservations {
  /**
   * Reserves `bytes` for `user` through `tx` (the transaction that checked the quota under
   * lockStorage, so that the check and the reservation are one step); resolves with its id.
   */
  hold(tx: Sql, user: string, kind: MediaKind, bytes: number): Promise<string>;
  /** The reservation `hold` made is committed: renewed from now on (one whose commit was lost lapses). */
  held(id: string): void;
  /**
   * Lets go of a reservation: no longer renewed from now on, deleted now or, when the database
   * cannot be reached, by retries until its lease lapses; `onFirstError` hears of the first failure.
   */
  release(id: string, onFirstError?: (error: unknown) => void): Promise<void>;
  /** Live reservations of `user`, by every node. */
  list(db: Sql, user: string): Promise<Array<{ bytes: number; kind: MediaKind }>>;
  /**
   * The bytes `user`'s live reservations hold, summed by the database: admission reads this on
   * every generation, and a thousand running would otherwise be a thousand rows read per admission.
   */
  reservedBytes(db: Sql, user: string): Promise<number>;
  /** Stops renewing and lets go of this node's reservations (the service is closing). */
  close(): Promise<void>;
}

export function databaseReservations(db: Db, node: string, now: () => number = Date.now): StorageReservations {
  // Renewed only while this node holds some (leased-rows.ts): an idle embedded engine writes nothing.
  const rows = new LeasedRows(db, 'storage_reservations', node, now);
  return {
    async hold(tx, user, kind, bytes) {
      const id = randomUUID();
      await tx.run(
        'INSERT INTO storage_reservations (id, user_id, kind, bytes, node, lease_until) VALUES (?, ?, ?, ?, ?, ?)',
        id,
        user,
        kind,
        bytes,
        node,
        rows.leaseUntil(),
      );
      return id;
    },
    held(id) {
      rows.add(id);
    },
    release(id, onFirstError) {
      return rows.release(id, onFirstError);
    },
    list(sql, user) {
      return sql.all<{ bytes: number; kind: MediaKind }>(
        'SELECT bytes, kind FROM storage_reservations WHERE user_id = ? AND lease_until > ?',
        user,
        now(),
      );
    },
    async reservedBytes(sql, user) {
      const row = await sql.get<{ n: number | null }>(
        'SELECT SUM(bytes) AS n FROM storage_reservations WHERE user_id = ? AND lease_until > ?',
        user,
        now(),
      );
      return row?.n ?? 0;
    },
    close() {
      return rows.close();
    },
  };
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
  const running = await q.reservations.reservedBytes(q.db, user);
  return { used: stored.n, reserved: (await uploadReservedBytes(q.db, user, q.now)) + running };
}

/**
 * Inside a transaction: waits until no other transaction of any node is admitting storage for
 * `user`, and holds that to the end. Without it, PostgreSQL's READ COMMITTED would let two nodes
 * read the same standing at once and both admit into the last free bytes; SQLite's one writer
 * serializes already (sql/dialect.ts lockKey).
 */
export async function lockStorage(tx: Sql, user: string): Promise<void> {
  await lockKey(tx, `storage/${user}`);
}

/**
 * Admits and reserves a running generation's estimated size for `user` in one transaction (the
 * check and the reservation row, under lockStorage), or throws the quota's 429. The returned
 * release is idempotent; its first failure is reported to `onReleaseError` (it is retried, and
 * no longer renewed, so its lease lapses at the latest).
 */
export async function reserveStorage(
  q: { db: Db; now: number; reservations: StorageReservations },
  user: string,
  limits: TierLimits,
  need: { bytes: number; kind: MediaKind; what: string },
  onReleaseError: (error: unknown) => void = () => undefined,
): Promise<() => void> {
  const id = await q.db.transaction(async (tx) => {
    await lockStorage(tx, user);
    await checkStorageQuota({ ...q, db: tx }, user, limits, need);
    return q.reservations.hold(tx, user, need.kind, need.bytes);
  });
  q.reservations.held(id);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    void q.reservations.release(id, onReleaseError);
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
  need: { bytes: number; what: string },
): Promise<void> {
  const { used, reserved } = await storageStanding(q, user);
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
  for (const r of await q.reservations.list(q.db, user)) {
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
