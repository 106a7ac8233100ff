import type { RateWindow } from '../../shared/api/index.ts';
import { RATE_WINDOWS, RATE_WINDOW_SECONDS } from '../../shared/api/index.ts';
import type { Clock } from '../../shared/clock.ts';

/**
 * Per-user request counts over fixed minute, hour and day windows aligned to the Unix epoch.
 * Fixed windows make `X-RateLimit-Reset` an exact, stable timestamp and `retry_after` exact.
 * Counts live in memory: they describe this process's traffic, and a restart forgets them.
 */
export interface RateState {
  limit: number;
  remaining: number;
  /** Unix seconds when the reported window resets. */
  reset: number;
}

export type RateDecision =
  { ok: true; state: RateState } | { ok: false; state: RateState; retryAfter: number; window: RateWindow };

interface WindowCount {
  start: number;
  count: number;
}

export class RateLimiter {
  private readonly clock: Clock;
  private readonly counts = new Map<string, Record<RateWindow, WindowCount>>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** Counts one request for `user` unless a window is full; a refused request is not counted. */
  take(user: string, limits: Record<RateWindow, number>): RateDecision {
    const now = this.clock.now();
    const windows = this.current(user, now);
    let breached: RateWindow | null = null;
    let retryAfter = 0;
    for (const w of RATE_WINDOWS) {
      if (windows[w].count >= limits[w]) {
        const wait = Math.ceil((windows[w].start + RATE_WINDOW_SECONDS[w] * 1000 - now) / 1000);
        if (wait > retryAfter) {
          retryAfter = wait;
          breached = w;
        }
      }
    }
    if (breached)
      return { ok: false, state: this.state(windows, limits), retryAfter: Math.max(1, retryAfter), window: breached };
    for (const w of RATE_WINDOWS) windows[w].count++;
    return { ok: true, state: this.state(windows, limits) };
  }

  /** Requests counted in each current window (for `/usage`). */
  usage(user: string): Record<RateWindow, number> {
    const windows = this.current(user, this.clock.now());
    return { minute: windows.minute.count, hour: windows.hour.count, day: windows.day.count };
  }

  private current(user: string, now: number): Record<RateWindow, WindowCount> {
    let windows = this.counts.get(user);
    if (!windows) {
      windows = { minute: { start: 0, count: 0 }, hour: { start: 0, count: 0 }, day: { start: 0, count: 0 } };
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

  /** The headers describe the window closest to refusing: the fewest requests remaining. */
  private state(windows: Record<RateWindow, WindowCount>, limits: Record<RateWindow, number>): RateState {
    let best: RateState | null = null;
    for (const w of RATE_WINDOWS) {
      const remaining = Math.max(0, limits[w] - windows[w].count);
      if (best === null || remaining < best.remaining) {
        best = {
          limit: limits[w],
          remaining,
          reset: Math.ceil((windows[w].start + RATE_WINDOW_SECONDS[w] * 1000) / 1000),
        };
      }
    }
    return best as RateState;
  }
}
