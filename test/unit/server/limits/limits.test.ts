import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../shared/clock.ts';
import { ConcurrencyLimiter } from '../../../../server/limits/concurrency.ts';
import { RateLimiter, databaseRateStore, memoryRateStore } from '../../../../server/limits/rate-limiter.ts';
import { openServiceDatabase } from '../../../../server/storage/db.ts';
import { TIERS } from '../../../../shared/api/index.ts';
import { accountLimits, parseLimitValue } from '../../../../server/limits/account-limits.ts';
import { estimateGenerationBytes } from '../../../../server/limits/storage-quota.ts';

const LIMITS = { minute: 2, hour: 3, day: 10 };

describe('RateLimiter', () => {
  it('counts per fixed window and tells how long to wait', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const rate = new RateLimiter(clock);
    expect(await rate.take('u', LIMITS)).toMatchObject({ ok: true, state: { limit: 2, remaining: 1 } });
    expect((await rate.take('u', LIMITS)).ok).toBe(true);
    const refused = await rate.take('u', LIMITS);
    expect(refused).toMatchObject({ ok: false, retryAfter: 50, window: 'minute' });
    expect(await rate.usage('u')).toEqual({ minute: 2, hour: 2, day: 2 });
    clock.advance(50_000);
    expect((await rate.take('u', LIMITS)).ok).toBe(true);
    const hour = await rate.take('u', LIMITS);
    expect(hour).toMatchObject({ ok: false, window: 'hour', retryAfter: 3600 - 60 });
    expect((await rate.take('other', LIMITS)).ok).toBe(true);
  });

  it('reports the window closest to refusing, with its reset in Unix seconds', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 0));
    const rate = new RateLimiter(clock);
    const first = await rate.take('u', { minute: 5, hour: 2, day: 10 });
    expect(first.state).toEqual({ limit: 2, remaining: 1, reset: Date.UTC(2026, 0, 1, 1) / 1000 });
  });
});

describe('RateLimiter refusals and persistence', () => {
  it('a refusal reports the refusing window: its limit, 0 remaining and its reset', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const rate = new RateLimiter(clock);
    const limits = { minute: 2, hour: 2, day: 10 };
    await rate.take('u', limits);
    await rate.take('u', limits);
    // Minute and hour are both full; the hour is the longer wait, so it is the one reported.
    expect(await rate.take('u', limits)).toEqual({
      ok: false,
      window: 'hour',
      retryAfter: 3600 - 10,
      state: { limit: 2, remaining: 0, reset: Date.UTC(2026, 0, 1, 1) / 1000 },
    });
  });

  it('counts in its store, so another limiter on the same store (a restart, another node) goes on from there', async () => {
    const store = memoryRateStore();
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
    const first = new RateLimiter(clock, store);
    await first.take('u', LIMITS);
    expect((await first.take('u', { minute: 1, hour: 1, day: 1 })).ok).toBe(false);
    clock.advance(60_000);
    await first.take('u', LIMITS);
    const second = new RateLimiter(clock, store);
    expect(await second.usage('u')).toEqual({ minute: 1, hour: 2, day: 2 });
    // The last request of a window goes to one of them only.
    const tight = { minute: 3, hour: 3, day: 3 };
    const both = await Promise.all([first.take('u', tight), second.take('u', tight)]);
    expect(both.map((d) => d.ok).sort()).toEqual([false, true]);
    clock.advance(3_600_000);
    expect(await second.usage('u')).toEqual({ minute: 0, hour: 0, day: 3 });
  });
});

describe('per-key request counts', () => {
  it('count the requests a key made that the windows accepted, not the refused ones', async () => {
    const rate = new RateLimiter(new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10)));
    for (let i = 0; i < 3; i++) await rate.take('u', LIMITS, 'key_a');
    expect(rate.unsavedKeyRequests('key_a')).toBe(2);
    expect(rate.unsavedKeyRequests('key_b')).toBe(0);
  });

  it('on SQLite, stay in memory until saved into api_keys.requests, and are not counted twice after', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-rate-'));
    const db = await openServiceDatabase({ kind: 'sqlite', dataDir });
    try {
      await db.run("INSERT INTO users (id, tier, created_at) VALUES ('u', 'pro', 0)");
      await db.run(
        "INSERT INTO api_keys (id, user_id, name, hash, last4, permissions, created_at, requests) VALUES ('key_a', 'u', 'a', 'h', 'abcd', '[]', 0, 5)",
      );
      const rate = new RateLimiter(new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10)), databaseRateStore(db));
      for (let i = 0; i < 3; i++) expect((await rate.take('u', LIMITS, 'key_a')).ok).toBe(i < 2);
      const saved = async () =>
        (await db.get<{ requests: number }>("SELECT requests FROM api_keys WHERE id = 'key_a'"))?.requests;
      expect([await saved(), rate.unsavedKeyRequests('key_a')]).toEqual([5, 2]);
      await rate.saveKeyRequests();
      expect([await saved(), rate.unsavedKeyRequests('key_a')]).toEqual([7, 0]);
      await rate.saveKeyRequests();
      expect(await saved()).toBe(7);
    } finally {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('account limits', () => {
  it('overrides replace only the limits they name', () => {
    const none = {
      rpm: null,
      rph: null,
      rpd: null,
      images: null,
      videos: null,
      storage_bytes: null,
      retention_days: null,
    };
    expect(accountLimits('pro', none)).toEqual(TIERS.pro);
    expect(accountLimits('enterprise', { ...none, rph: 7, videos: 2, retention_days: 3 })).toEqual({
      ...TIERS.enterprise,
      rate: { ...TIERS.enterprise.rate, hour: 7 },
      concurrency: { ...TIERS.enterprise.concurrency, video: 2 },
      retentionDays: 3,
    });
  });

  it('values are positive whole numbers', () => {
    expect(parseLimitValue('rpm', '12')).toBe(12);
    for (const bad of ['0', '-3', '1.5', '1e3', 'ten', '', '99999999999999999999'])
      expect(() => parseLimitValue('rpm', bad)).toThrow(/--rpm must be a positive whole number/);
    expect(parseLimitValue('retention', '36500')).toBe(36_500);
    expect(() => parseLimitValue('retention', '36501')).toThrow(/at most 36500 days/);
  });
});

describe('generation size estimate', () => {
  it('stays above what the Local engine stores, measured per size', () => {
    // Measured Local renders (MP4 + WebM, noisiest prompts seen): 360p 2 s at 24 fps ≈ 1.67 MB,
    // 1080p 8 s at 30 fps ≈ 9.9 MB; a 4096² still (PNG + WebP) ≈ 0.73 MB.
    expect(estimateGenerationBytes({ kind: 'video', width: 640, height: 360, duration: 2, count: 1 })).toBeGreaterThan(
      2 * 1.67e6,
    );
    expect(
      estimateGenerationBytes({ kind: 'video', width: 1920, height: 1080, duration: 8, count: 1 }),
    ).toBeGreaterThan(4 * 9.9e6);
    const one = estimateGenerationBytes({ kind: 'image', width: 4096, height: 4096, duration: 0, count: 1 });
    expect(one).toBeGreaterThan(4096 * 4096 * 4);
    expect(estimateGenerationBytes({ kind: 'image', width: 4096, height: 4096, duration: 0, count: 3 })).toBe(3 * one);
  });
});

describe('ConcurrencyLimiter', () => {
  it('holds at most the limit per user and kind, and remembers the highest count', async () => {
    const c = new ConcurrencyLimiter();
    const a = (await c.tryAcquire('u', 'video', 2))!;
    const b = (await c.tryAcquire('u', 'video', 2))!;
    expect(await c.tryAcquire('u', 'video', 2)).toBeNull();
    expect(await c.tryAcquire('u', 'image', 1)).not.toBeNull();
    a();
    a();
    expect(c.count('u', 'video')).toBe(1);
    b();
    expect(c.count('u', 'video')).toBe(0);
    expect(c.maxObserved('u', 'video')).toBe(2);
    expect(c.snapshot()).toEqual(expect.arrayContaining([{ user: 'u', kind: 'video', max: 2 }]));
  });
});
