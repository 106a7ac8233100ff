import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../shared/clock.ts';
import { ConcurrencyLimiter } from '../../../../server/limits/concurrency.ts';
import { RateLimiter } from '../../../../server/limits/rate-limiter.ts';

const LIMITS = { minute: 2, hour: 3, day: 10 };

describe('RateLimiter', () => {
  it('counts per fixed window and tells how long to wait', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const rate = new RateLimiter(clock);
    expect(rate.take('u', LIMITS)).toMatchObject({ ok: true, state: { limit: 2, remaining: 1 } });
    expect(rate.take('u', LIMITS).ok).toBe(true);
    const refused = rate.take('u', LIMITS);
    expect(refused).toMatchObject({ ok: false, retryAfter: 50, window: 'minute' });
    expect(rate.usage('u')).toEqual({ minute: 2, hour: 2, day: 2 });
    clock.advance(50_000);
    expect(rate.take('u', LIMITS).ok).toBe(true);
    const hour = rate.take('u', LIMITS);
    expect(hour).toMatchObject({ ok: false, window: 'hour', retryAfter: 3600 - 60 });
    expect(rate.take('other', LIMITS).ok).toBe(true);
  });

  it('reports the window closest to refusing, with its reset in Unix seconds', () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0));
    const rate = new RateLimiter(clock);
    const first = rate.take('u', { minute: 5, hour: 2, day: 10 });
    expect(first.state).toEqual({ limit: 2, remaining: 1, reset: Date.UTC(2026, 0, 1, 1) / 1000 });
  });
});

describe('ConcurrencyLimiter', () => {
  it('holds at most the limit per user and kind, and remembers the highest count', () => {
    const c = new ConcurrencyLimiter();
    const a = c.tryAcquire('u', 'video', 2)!;
    const b = c.tryAcquire('u', 'video', 2)!;
    expect(c.tryAcquire('u', 'video', 2)).toBeNull();
    expect(c.tryAcquire('u', 'image', 1)).not.toBeNull();
    a();
    a();
    expect(c.count('u', 'video')).toBe(1);
    b();
    expect(c.count('u', 'video')).toBe(0);
    expect(c.maxObserved('u', 'video')).toBe(2);
    expect(c.snapshot()).toEqual(expect.arrayContaining([{ user: 'u', kind: 'video', max: 2 }]));
  });
});
