import type { Clock } from '../../../shared/clock.ts';
import { RATE_LIMIT_HEADERS } from '../../../shared/api/index.ts';

/** What the service last told us about our rate limit (spec, "Rate limit headers"). */
export interface RateLimitState {
  limit: number | null;
  /** Requests left, counted down locally for requests sent since the last response. */
  remaining: number | null;
  /** Unix timestamp in seconds when the window resets. */
  reset: number | null;
  /** Epoch ms of the last response that carried the headers. */
  updatedAt: number | null;
}

export const EMPTY_RATE_LIMIT: RateLimitState = { limit: null, remaining: null, reset: null, updatedAt: null };

type HeaderBag = Record<string, string | string[] | undefined>;

function headerNumber(headers: HeaderBag, name: string): number | null {
  const raw = headers[name];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || text.trim() === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/**
 * Tracks the rate-limit headers so that the client never sends a request that is bound to be
 * answered 429: when nothing is left in the window, it waits for the reset first.
 */
export class RateLimitTracker {
  private state: RateLimitState = { ...EMPTY_RATE_LIMIT };
  private readonly clock: Clock;
  private readonly listeners = new Set<(state: RateLimitState) => void>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  get current(): RateLimitState {
    return { ...this.state };
  }

  subscribe(listener: (state: RateLimitState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the headers of a response; responses without them leave the state alone. */
  update(headers: HeaderBag): void {
    const limit = headerNumber(headers, RATE_LIMIT_HEADERS.limit);
    const remaining = headerNumber(headers, RATE_LIMIT_HEADERS.remaining);
    const reset = headerNumber(headers, RATE_LIMIT_HEADERS.reset);
    if (limit === null && remaining === null && reset === null) return;
    this.state = {
      limit: limit ?? this.state.limit,
      remaining: remaining ?? this.state.remaining,
      reset: reset ?? this.state.reset,
      updatedAt: this.clock.now(),
    };
    this.emit();
  }

  /** After a 429 we know nothing is left until the service's retry_after has passed. */
  exhaustUntil(epochMs: number): void {
    const resetSeconds = Math.ceil(epochMs / 1000);
    this.state = {
      ...this.state,
      remaining: 0,
      reset: Math.max(this.state.reset ?? 0, resetSeconds),
      updatedAt: this.clock.now(),
    };
    this.emit();
  }

  /** The wait the service asked for is over: the next response tells us the new count. */
  release(): void {
    this.state = { ...this.state, remaining: null };
  }

  /**
   * Milliseconds to wait before the next request may be sent, and takes a slot when none is
   * needed. 0 when the window has room or we know nothing.
   */
  reserve(): number {
    const { remaining, reset } = this.state;
    if (remaining === null) return 0;
    const now = this.clock.now();
    if (reset !== null && reset * 1000 <= now) {
      // The window has rolled over; the next response will tell us the new count.
      this.state = { ...this.state, remaining: null };
      return 0;
    }
    if (remaining > 0) {
      this.state = { ...this.state, remaining: remaining - 1 };
      return 0;
    }
    if (reset === null) return 0;
    return reset * 1000 - now;
  }

  private emit(): void {
    const snapshot = this.current;
    for (const listener of this.listeners) listener(snapshot);
  }
}
