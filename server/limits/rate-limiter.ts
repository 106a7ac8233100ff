import type { RateWindow } from '../../shared/api/index.ts';
import { RATE_WINDOWS, RATE_WINDOW_SECONDS } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Db } from '../storage/db.ts';

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
  load(user: string): Promise<Partial<UserWindows>>;
  save(user: string, windows: UserWindows): Promise<void>;
}

/**
 * The service database's `rate_windows` (migration 2): one prepared UPSERT of the user's three
 * rows per counted request, and one SELECT the first time this process sees the user.
 */
export function sqliteRateStore(db: Db): RateStore {
  return {
    async load(user) {
      const rows = await db.all<{
        window: RateWindow;
        start: number;
        count: number;
      }>('SELECT "window", start, count FROM rate_windows WHERE user_id = ?', user);
      const out: Partial<UserWindows> = {};
      for (const r of rows) if ((RATE_WINDOWS as readonly string[]).includes(r.window)) out[r.window] = r;
      return out;
    },
    async save(user, w) {
      await db.run(
        `INSERT INTO rate_windows (user_id, "window", start, count) VALUES (?, 'minute', ?, ?), (?, 'hour', ?, ?), (?, 'day', ?, ?)
         ON CONFLICT(user_id, "window") DO UPDATE SET start = excluded.start, count = excluded.count`,
        user,
        w.minute.start,
        w.minute.count,
        user,
        w.hour.start,
        w.hour.count,
        user,
        w.day.start,
        w.day.count,
      );
    },
  };
}

export class RateLimiter {
  private readonly clock: Clock;
  private readonly store: RateStore | null;
  private readonly counts = new Map<string, UserWindows>();
  /** Users whose saved windows are being read: every request of theirs waits for the one read. */
  private readonly loading = new Map<string, Promise<void>>();

  /** Without a store the counts live only as long as this object (unit tests). */
  constructor(clock: Clock, store: RateStore | null = null) {
    this.clock = clock;
    this.store = store;
  }

  /** Counts one request for `user` unless a window is full; a refused request is not counted. */
  async take(user: string, limits: Record<RateWindow, number>): Promise<RateDecision> {
    await this.load(user);
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
    await this.store?.save(user, windows);
    return { ok: true, state: this.state(windows, limits) };
  }

  /** Requests counted in each current window (for `/usage`). */
  async usage(user: string): Promise<Record<RateWindow, number>> {
    await this.load(user);
    const windows = this.current(user, this.clock.now());
    return { minute: windows.minute.count, hour: windows.hour.count, day: windows.day.count };
  }

  /** Reads the user's saved windows the first time this process sees the user. */
  private load(user: string): Promise<void> {
    if (this.counts.has(user)) return Promise.resolve();
    let loading = this.loading.get(user);
    if (!loading) {
      loading = (async () => {
        try {
          const saved = (await this.store?.load(user)) ?? {};
          this.counts.set(user, {
            minute: saved.minute ?? { start: 0, count: 0 },
            hour: saved.hour ?? { start: 0, count: 0 },
            day: saved.day ?? { start: 0, count: 0 },
          });
        } finally {
          this.loading.delete(user);
        }
      })();
      this.loading.set(user, loading);
    }
    return loading;
  }

  /** The user's windows (loaded first), each moved on to the window `now` is in. */
  private current(user: string, now: number): UserWindows {
    const windows = this.counts.get(user);
    if (!windows) throw new Error(`rate windows of ${user} were not loaded`);
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
