import type { RateWindow } from '../../shared/api/index.ts';
import { RATE_WINDOWS, RATE_WINDOW_SECONDS } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Db } from '../storage/db.ts';
import { sql } from '../storage/db.ts';

/**
 * Per-user request counts over fixed minute, hour and day windows aligned to the Unix epoch.
 * Fixed windows make `X-RateLimit-Reset` an exact, stable timestamp and `retry_after` exact.
 * The counts are decided in memory and written through to a RateStore on every counted request,
 * so a restart resumes them (a restart must not hand out a fresh day).
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

export interface WindowCount {
  start: number;
  count: number;
}

export type UserWindows = Record<RateWindow, WindowCount>;

/** Where counts outlive the process. */
export interface RateStore {
  /** A user's last saved windows (any it never saved start at zero). */
  load(user: string): Partial<UserWindows>;
  save(user: string, windows: UserWindows): void;
}

/**
 * The service database's `rate_windows` (migration 2): one prepared UPSERT of the user's three
 * rows per counted request, and one SELECT the first time this process sees the user.
 */
export function sqliteRateStore(db: Db): RateStore {
  return {
    load(user) {
      const rows = sql(db, 'SELECT window, start, count FROM rate_windows WHERE user_id = ?').all(user) as Array<{
        window: RateWindow;
        start: number;
        count: number;
      }>;
      const out: Partial<UserWindows> = {};
      for (const r of rows) if ((RATE_WINDOWS as readonly string[]).includes(r.window)) out[r.window] = r;
      return out;
    },
    save(user, w) {
      sql(
        db,
        `INSERT INTO rate_windows (user_id, window, start, count) VALUES (?, 'minute', ?, ?), (?, 'hour', ?, ?), (?, 'day', ?, ?)
         ON CONFLICT(user_id, window) DO UPDATE SET start = excluded.start, count = excluded.count`,
      ).run(user, w.minute.start, w.minute.count, user, w.hour.start, w.hour.count, user, w.day.start, w.day.count);
    },
  };
}

export class RateLimiter {
  private readonly clock: Clock;
  private readonly store: RateStore | null;
  private readonly counts = new Map<string, UserWindows>();

  /** Without a store the counts live only as long as this object (unit tests). */
  constructor(clock: Clock, store: RateStore | null = null) {
    this.clock = clock;
    this.store = store;
  }

  /** Counts one request for `user` unless a window is full; a refused request is not counted. */
  take(user: string, limits: Record<RateWindow, number>): RateDecision {
    const now = this.clock.now();
    const windows = this.current(user, now);
    let breached: RateWindow | null = null;
    let retryAfter = 0;
    for (const w of RATE_WINDOWS) {
      if (windows[w].count >= limits[w]) {
        const wait = Math.ceil((windowEnd(windows, w) - now) / 1000);
        if (wait > retryAfter) {
          retryAfter = wait;
          breached = w;
        }
      }
    }
    if (breached) {
      // The headers of a refusal describe the window that refused (its limit and reset), so they
      // agree with retry_after, even when a shorter window is full too.
      const state = { limit: limits[breached], remaining: 0, reset: Math.ceil(windowEnd(windows, breached) / 1000) };
      return { ok: false, state, retryAfter: Math.max(1, retryAfter), window: breached };
    }
    for (const w of RATE_WINDOWS) windows[w].count++;
    this.store?.save(user, windows);
    return { ok: true, state: this.state(windows, limits) };
  }

  /** Requests counted in each current window (for `/usage`). */
  usage(user: string): Record<RateWindow, number> {
    const windows = this.current(user, this.clock.now());
    return { minute: windows.minute.count, hour: windows.hour.count, day: windows.day.count };
  }

  private current(user: string, now: number): UserWindows {
    let windows = this.counts.get(user);
    if (!windows) {
      const saved = this.store?.load(user) ?? {};
      windows = {
        minute: saved.minute ?? { start: 0, count: 0 },
        hour: saved.hour ?? { start: 0, count: 0 },
        day: saved.day ?? { start: 0, count: 0 },
      };
      this.counts.set(user, windows);
    }
    for (const w of RATE_WINDOWS) {
      const length = RATE_WINDOW_SECONDS[w] * 1000;
      const start = Math.floor(now / length) * length;
      // A clock moved backwards (tests, NTP) starts a fresh window rather than going negative.
      if (windows[w].start !== start) windows[w] = { start, count: 0 };
    }
    return windows;
  }

  /** The headers of an accepted request describe the window closest to refusing: the fewest remaining. */
  private state(windows: UserWindows, limits: Record<RateWindow, number>): RateState {
    let best: RateState | null = null;
    for (const w of RATE_WINDOWS) {
      const remaining = Math.max(0, limits[w] - windows[w].count);
      if (best === null || remaining < best.remaining) {
        best = { limit: limits[w], remaining, reset: Math.ceil(windowEnd(windows, w) / 1000) };
      }
    }
    return best as RateState;
  }
}

function windowEnd(windows: UserWindows, w: RateWindow): number {
  return windows[w].start + RATE_WINDOW_SECONDS[w] * 1000;
}
