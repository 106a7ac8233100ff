import { rateLimitError } from '../errors.ts';

/**
 * A token bucket per source address, in memory, for routes anyone may reach without a key (the
 * provider webhooks): `burst` requests at once, refilled at `perSecond`. At most `maxSources`
 * buckets are kept, the least recently used dropped first (a dropped source starts full again),
 * so what a flood of addresses can make it hold is bounded too. Per node (docs/security.md).
 */
export class SourceRateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly what: string;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly maxSources: number;

  constructor(what: string, burst: number, perSecond: number, maxSources = 4_096) {
    this.what = what;
    this.burst = burst;
    this.perSecond = perSecond;
    this.maxSources = maxSources;
  }

  /** Takes one request of `source`, or throws the 429 to answer (with Retry-After). */
  take(source: string, now = Date.now()): void {
    const held = this.buckets.get(source);
    const bucket = held ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    // Most recently used last: the first entry is the one to drop.
    if (held) this.buckets.delete(source);
    this.buckets.set(source, bucket);
    if (this.buckets.size > this.maxSources) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    if (bucket.tokens < 1) throw rateLimitError(this.what, (1 - bucket.tokens) / this.perSecond);
    bucket.tokens -= 1;
  }
}
