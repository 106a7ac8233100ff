import type { RateWindow } from '../../shared/api/index.ts';
import { RATE_WINDOWS, RATE_WINDOW_SECONDS } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Db } from '../storage/db.ts';

/**
 * Per-user request counts over fixed minute, hour and day windows aligned to the Unix epoch.
 * Fixed windows make `X-RateLimit-Reset` an exact, stable timestamp and `retry_after` exact.
 *
 * The counts live in the service database (rate_counters, one row per account) and each counted
 * request is one atomic statement there: all three windows go up by one only if none is full, and
 * the statement returns the new counts (databaseRateStore). So every node that shares the database
 * counts the same windows, `X-RateLimit-*` agree whichever node answers, and a restart loses
 * nothing. Decided over rate-limiter-flexible (which has a PostgreSQL backend): it keeps one row
 * per key *and window* and consumes each limiter separately, so three windows cost three round
 * trips and a request refused by the day window has already been counted in the minute's; it has
 * no SQLite backend, so the embedded engine would count differently from a team's service; and
 * its counts are not the ones GET /usage must report. One upsert covers both databases.
 *
 * The same statement counts the request for its key on PostgreSQL (`api_keys.requests`, GET /usage's
 * per-key figure): a data-modifying CTE beside the upsert, so every node reads every node's requests
 * and the hot path keeps its one round trip. SQLite cannot modify in a CTE, and one node needs no
 * agreement: there the key counts stay in memory and are saved now and then (saveKeyRequests).
 */
export interface RateState {
  limit: number;
  remaining: number;
  /** Unix seconds when the reported window resets. */
  reset: number;
}

export type RateDecision =
  | { ok: true; state: RateState }
  /** `state` describes the refusing window: its limit, 0 remaining and its reset. */
  | { ok: false; state: RateState; retryAfter: number; window: RateWindow };

/** Epoch ms at which each current window started. */
export type WindowStarts = Record<RateWindow, number>;
/** The moment a request is counted at, and its windows. */
export interface CountedAt {
  now: number;
  starts: WindowStarts;
}
export type WindowCounts = Record<RateWindow, number>;

/** Where counts are kept and counted. */
export interface RateStore {
  /**
   * Counts one request in every window unless one of them is full (its count in the window
   * starting at `starts` has reached its limit). Resolves with the counts after it, or null when a
   * window was full (nothing was counted). Atomic: two nodes never both take the last request.
   */
  take(
    user: string,
    starts: WindowStarts,
    limits: Record<RateWindow, number>,
    keyId?: string,
  ): Promise<WindowCounts | null>;
  /** The user's counts in the windows starting at `starts` (a window that has moved on counts 0). */
  read(user: string, starts: WindowStarts): Promise<WindowCounts>;
  /** Requests of `keyId` counted but not yet in `api_keys.requests` (0 where take writes them there). */
  unsavedKeyRequests(keyId: string): number;
  /** Adds the unsaved key counts to `api_keys.requests` (a no-op where take writes them there). */
  saveKeyRequests(): Promise<void>;
}

/** Per-key counts kept in this process until saved (SQLite, and the memory store). */
class UnsavedKeyRequests {
  readonly counts = new Map<string, number>();
  add(keyId: string | undefined): void {
    if (keyId !== undefined) this.counts.set(keyId, (this.counts.get(keyId) ?? 0) + 1);
  }
  get(keyId: string): number {
    return this.counts.get(keyId) ?? 0;
  }
}

interface CounterRow {
  minute_start: number;
  minute_count: number;
  hour_start: number;
  hour_count: number;
  day_start: number;
  day_count: number;
}

/** A window's count, or 0 when the row's window is another (one that has ended, or a clock set back). */
const inWindow = (start: number, count: number, current: number) => (start === current ? count : 0);

/**
 * The counting upsert: one more request in every window unless one is full. `rows` is what it
 * inserts (user_id, minute_start, 1, hour_start, 1, day_start, 1) and `limits` the minute's,
 * hour's and day's limits as SQL expressions.
 */
function takeSql(rows: string, limits: readonly [string, string, string]): string {
  return `INSERT INTO rate_counters AS c (user_id, minute_start, minute_count, hour_start, hour_count, day_start, day_count)
  ${rows}
  ON CONFLICT (user_id) DO UPDATE SET
    minute_count = CASE WHEN c.minute_start = excluded.minute_start THEN c.minute_count + 1 ELSE 1 END,
    minute_start = excluded.minute_start,
    hour_count = CASE WHEN c.hour_start = excluded.hour_start THEN c.hour_count + 1 ELSE 1 END,
    hour_start = excluded.hour_start,
    day_count = CASE WHEN c.day_start = excluded.day_start THEN c.day_count + 1 ELSE 1 END,
    day_start = excluded.day_start
  WHERE (CASE WHEN c.minute_start = excluded.minute_start THEN c.minute_count ELSE 0 END) < ${limits[0]}
    AND (CASE WHEN c.hour_start = excluded.hour_start THEN c.hour_count ELSE 0 END) < ${limits[1]}
    AND (CASE WHEN c.day_start = excluded.day_start THEN c.day_count ELSE 0 END) < ${limits[2]}
  RETURNING minute_count, hour_count, day_count`;
}

const TAKE_SQL = takeSql('VALUES (?, ?, 1, ?, 1, ?, 1)', ['?', '?', '?']);

/**
 * The same count as a data-modifying CTE (PostgreSQL) for a statement that has found the account
 * first: `source` is a CTE with one row (user_id, rate_minute, rate_hour, rate_day) or none, and
 * the parameters are the windows' starts (minute, hour, day). Nothing is counted without a row.
 */
export function takeFromSql(source: string): string {
  return takeSql(`SELECT user_id, ?, 1, ?, 1, ?, 1 FROM ${source}`, [
    `(SELECT rate_minute FROM ${source})`,
    `(SELECT rate_hour FROM ${source})`,
    `(SELECT rate_day FROM ${source})`,
  ]);
}

/**
 * PostgreSQL: TAKE_SQL, and the key's count up by one only when the windows counted the request.
 * Every sub-statement of a WITH runs to completion once, read or not, in the statement's snapshot.
 */
const TAKE_AND_COUNT_KEY_SQL = `WITH taken AS (${TAKE_SQL}),
  key_counted AS (UPDATE api_keys SET requests = requests + 1 WHERE id = ? AND EXISTS (SELECT 1 FROM taken))
  SELECT minute_count, hour_count, day_count FROM taken`;

/** The service database's `rate_counters` (SQLite version 7, PostgreSQL version 3). */
export function databaseRateStore(db: Db): RateStore {
  const inStatement = db.dialect === 'postgres';
  const unsaved = new UnsavedKeyRequests();
  return {
    async take(user, s, limits, keyId) {
      const windows = [user, s.minute, s.hour, s.day, limits.minute, limits.hour, limits.day];
      // A new account's first request is counted as it is inserted: every limit is at least 1.
      const row =
        inStatement && keyId !== undefined
          ? await db.get<{ minute_count: number; hour_count: number; day_count: number }>(
              TAKE_AND_COUNT_KEY_SQL,
              ...windows,
              keyId,
            )
          : await db.get<{ minute_count: number; hour_count: number; day_count: number }>(TAKE_SQL, ...windows);
      if (!row) return null;
      if (!inStatement) unsaved.add(keyId);
      return { minute: row.minute_count, hour: row.hour_count, day: row.day_count };
    },
    async read(user, s) {
      const r = await db.get<CounterRow>('SELECT * FROM rate_counters WHERE user_id = ?', user);
      if (!r) return { minute: 0, hour: 0, day: 0 };
      return {
        minute: inWindow(r.minute_start, r.minute_count, s.minute),
        hour: inWindow(r.hour_start, r.hour_count, s.hour),
        day: inWindow(r.day_start, r.day_count, s.day),
      };
    },
    unsavedKeyRequests: (keyId) => unsaved.get(keyId),
    async saveKeyRequests() {
      // Taken out before the writes: requests counted meanwhile wait for the next save.
      const counts = [...unsaved.counts];
      unsaved.counts.clear();
      for (const [i, [id, n]] of counts.entries()) {
        try {
          await db.run('UPDATE api_keys SET requests = requests + ? WHERE id = ?', n, id);
        } catch (error) {
          // Not lost: what was not written is counted again, for the next save.
          for (const [rest, m] of counts.slice(i)) unsaved.counts.set(rest, unsaved.get(rest) + m);
          throw error;
        }
      }
    },
  };
}

/** The same counting in this process's memory (unit tests of the limiter itself). */
export function memoryRateStore(): RateStore {
  const rows = new Map<string, { starts: WindowStarts; counts: WindowCounts }>();
  const keys = new UnsavedKeyRequests();
  const read = (user: string, s: WindowStarts): WindowCounts => {
    const r = rows.get(user);
    return {
      minute: r ? inWindow(r.starts.minute, r.counts.minute, s.minute) : 0,
      hour: r ? inWindow(r.starts.hour, r.counts.hour, s.hour) : 0,
      day: r ? inWindow(r.starts.day, r.counts.day, s.day) : 0,
    };
  };
  return {
    take(user, s, limits, keyId) {
      const now = read(user, s);
      if (RATE_WINDOWS.some((w) => now[w] >= limits[w])) return Promise.resolve(null);
      const counts = { minute: now.minute + 1, hour: now.hour + 1, day: now.day + 1 };
      rows.set(user, { starts: { ...s }, counts });
      keys.add(keyId);
      return Promise.resolve({ ...counts });
    },
    read: (user, s) => Promise.resolve(read(user, s)),
    // Nowhere to save to: the counts stay unsaved as long as the store lives.
    unsavedKeyRequests: (keyId) => keys.get(keyId),
    saveKeyRequests: () => Promise.resolve(),
  };
}

export class RateLimiter {
  private readonly clock: Clock;
  private readonly store: RateStore;

  /** Without a store the counts live only as long as this object (unit tests). */
  constructor(clock: Clock, store: RateStore = memoryRateStore()) {
    this.clock = clock;
    this.store = store;
  }

  /**
   * Counts one request for `user` unless a window is full; a refused request is not counted. An
   * accepted request also counts for `keyId`, the key it came with (GET /usage per key).
   */
  async take(user: string, limits: Record<RateWindow, number>, keyId?: string): Promise<RateDecision> {
    const at = this.windows();
    return await this.decide(user, limits, at, await this.store.take(user, at.starts, limits, keyId));
  }

  /** The windows at this moment, for a count made elsewhere (see `decide`). */
  windows(): CountedAt {
    const now = this.clock.now();
    return { now, starts: windowStarts(now) };
  }

  /**
   * The decision on a request counted in the windows of `at` by a statement of the caller's own
   * (PostgreSQL reads the key and counts in one: keys.ts verifyKeyCounting): `counts` after it,
   * or null when a window was full and nothing was counted.
   */
  async decide(
    user: string,
    limits: Record<RateWindow, number>,
    at: CountedAt,
    counts: WindowCounts | null,
  ): Promise<RateDecision> {
    const { now, starts } = at;
    if (counts) return { ok: true, state: closestToRefusing(counts, starts, limits) };
    const current = await this.store.read(user, starts);
    let breached: RateWindow = 'minute';
    let retryAfter = 0;
    for (const w of RATE_WINDOWS) {
      if (current[w] >= limits[w]) {
        const wait = Math.ceil((windowEnd(starts, w) - now) / 1000);
        if (wait > retryAfter) {
          retryAfter = wait;
          breached = w;
        }
      }
    }
    // The headers of a refusal describe the window that refused (its limit and reset), so they
    // agree with retry_after, even when a shorter window is full too.
    const state = { limit: limits[breached], remaining: 0, reset: Math.ceil(windowEnd(starts, breached) / 1000) };
    return { ok: false, state, retryAfter: Math.max(1, retryAfter), window: breached };
  }

  /** Requests counted in each current window (for `/usage`). */
  usage(user: string): Promise<WindowCounts> {
    return this.store.read(user, windowStarts(this.clock.now()));
  }

  /** Requests of `keyId` not yet in `api_keys.requests`: /usage adds them to the saved count. */
  unsavedKeyRequests(keyId: string): number {
    return this.store.unsavedKeyRequests(keyId);
  }

  /** Writes the key counts kept in memory to the database (the sweep timer, and the stop). */
  saveKeyRequests(): Promise<void> {
    return this.store.saveKeyRequests();
  }
}

function windowStarts(now: number): WindowStarts {
  const start = (w: RateWindow) => {
    const length = RATE_WINDOW_SECONDS[w] * 1000;
    return Math.floor(now / length) * length;
  };
  return { minute: start('minute'), hour: start('hour'), day: start('day') };
}

/** The headers of an accepted request describe the window closest to refusing: the fewest remaining. */
function closestToRefusing(counts: WindowCounts, starts: WindowStarts, limits: Record<RateWindow, number>): RateState {
  let best: RateState | null = null;
  for (const w of RATE_WINDOWS) {
    const remaining = Math.max(0, limits[w] - counts[w]);
    if (best === null || remaining < best.remaining) {
      best = { limit: limits[w], remaining, reset: Math.ceil(windowEnd(starts, w) / 1000) };
    }
  }
  return best as RateState;
}

function windowEnd(starts: WindowStarts, w: RateWindow): number {
  return starts[w] + RATE_WINDOW_SECONDS[w] * 1000;
}
