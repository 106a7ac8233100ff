import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../../server/index.ts';
import type { RunningService } from '../../../server/index.ts';
import { clientFor, startTestService, testDatabaseFor } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.stop();
});

/** Moves the clock to a whole minute, `seconds` into the next day (same hour and day after). */
function toDayStart(seconds = 5) {
  const day = 86_400_000;
  t.clock.set(Math.floor(t.clock.now() / day) * day + day + seconds * 1000);
}

const endOf = (ms: number, now: number) => Math.ceil(now / ms) * ms;

describe('rate headers on a 429 describe the window that refused', () => {
  it('when the hour refuses (the minute is full too), Limit and Reset are the hour’s and Remaining is 0', async () => {
    toDayStart();
    const c = await t.client('hour-headers', 'free');
    expect(await t.service.setLimits('hour-headers', { rpm: 3, rph: 6 })).toBe(true);
    for (let i = 0; i < 3; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    t.clock.advance(60_000);
    for (let i = 0; i < 3; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    const refused = await c.call('GET', '/models');
    expect(refused.status).toBe(429);
    expect(refused.body.message).toContain('6 requests per hour');
    const now = t.clock.now();
    const hourEnd = endOf(3_600_000, now);
    expect(refused.body.retry_after).toBe(Math.ceil((hourEnd - now) / 1000));
    expect(refused.headers.get('x-ratelimit-limit')).toBe('6');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(hourEnd / 1000);
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.retry_after));
    // The message states its wait once.
    expect(String(refused.body.message).match(/retry after/gi)).toEqual(['Retry after']);
    expect(refused.body.message).toContain(`Retry after ${refused.body.retry_after} seconds.`);
  });

  it('when only the minute refuses, the headers are the minute’s', async () => {
    toDayStart();
    const c = await t.client('minute-headers', 'free');
    for (let i = 0; i < 10; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    const refused = await c.call('GET', '/models');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('10');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(endOf(60_000, t.clock.now()) / 1000);
  });
});

describe('rate counters survive a restart', () => {
  let again: RunningService | null = null;
  afterAll(async () => {
    await again?.close();
  });

  it('closing and reopening the service on the same data keeps the minute, hour and day counts', async () => {
    toDayStart();
    const c = await t.client('restarted', 'free');
    expect(await t.service.setLimits('restarted', { rpm: 100, rph: 100, rpd: 8 })).toBe(true);
    for (let i = 0; i < 2; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    t.clock.advance(60_000);
    for (let i = 0; i < 3; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    // 2 in the first minute and 3 in this one: minute 3, hour 5, day 5.
    await t.service.close();
    const database = await testDatabaseFor(t.dataDir);
    again = await startService({
      dataDir: t.dataDir,
      clock: t.clock,
      sweepIntervalMs: 0,
      ...(database !== undefined ? { database } : {}),
    });
    const after: TestClient = clientFor(again.url, c.key);
    const usage = await after.call('GET', '/usage');
    expect(usage.status).toBe(200);
    // Reading the usage is not counted (docs/api.md, "What counts against the rate limits").
    expect(usage.body.result.usage.requests).toEqual({ minute: 3, hour: 5, day: 5 });
    for (let i = 0; i < 3; i++) expect((await after.call('GET', '/models')).status).toBe(200);
    const refused = await after.call('GET', '/models');
    expect(refused.status).toBe(429);
    expect(refused.body.message).toContain('8 requests per day');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('8');
    // A new minute and hour do not reset the day.
    t.clock.advance(3_600_000);
    expect((await after.call('GET', '/models')).status).toBe(429);
  });
});
