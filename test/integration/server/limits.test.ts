import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIERS } from '../../../shared/api/index.ts';
import { SMALL_VIDEO, clientFor, startTestService } from './helpers.ts';
import type { ApiResponse, TestService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.stop();
});

/** Moves the clock to the start of the next window of `seconds`, plus a second. */
function toNextWindow(seconds: number) {
  const ms = seconds * 1000;
  t.clock.set(Math.floor(t.clock.now() / ms) * ms + ms + 1000);
}

function expect429(res: ApiResponse, wait: number) {
  expect(res.status).toBe(429);
  expect(res.body.code).toBe('rate_limit_exceeded');
  expect(res.body.success).toBe(false);
  expect(res.body.retry_after).toBe(wait);
  expect(Number.isInteger(res.body.retry_after)).toBe(true);
  expect(res.body.message).toContain(`${wait} second`);
}

describe('rate limits per tier, on a clock the test controls', () => {
  it('free: 10 per minute, then 429 until the minute ends', async () => {
    toNextWindow(86_400);
    const c = await t.client('minute-user', 'free');
    for (let i = 0; i < 10; i++) {
      const res = await c.call('GET', '/models');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(9 - i));
      expect(res.headers.get('x-ratelimit-limit')).toBe('10');
    }
    t.clock.advance(20_000);
    const refused = await c.call('GET', '/models');
    expect429(refused, 39);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(Math.ceil(t.clock.now() / 1000) + 39);
    t.clock.advance(39_000);
    expect((await c.call('GET', '/models')).status).toBe(200);
  });

  it('a wrong secret for a real key counts nothing against its account', async () => {
    toNextWindow(86_400);
    const c = await t.client('guessed-user', 'free');
    // The key's id is in the key and not secret; the rest is. Same length, same alphabet.
    const last = c.key.at(-1) === 'A' ? 'B' : 'A';
    const wrong = clientFor(t.service.url, `${c.key.slice(0, -1)}${last}`);
    for (let i = 0; i < 12; i++) expect((await wrong.call('GET', '/models')).status).toBe(401);
    const res = await c.call('GET', '/models');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('free: 100 per hour across minutes', async () => {
    toNextWindow(86_400);
    const c = await t.client('hour-user', 'free');
    for (let minute = 0; minute < 10; minute++) {
      for (let i = 0; i < 10; i++) expect((await c.call('GET', '/providers')).status).toBe(200);
      t.clock.advance(60_000);
    }
    const res = await c.call('GET', '/providers');
    const wait = Math.ceil((Math.ceil(t.clock.now() / 3_600_000) * 3_600_000 - t.clock.now()) / 1000);
    expect429(res, wait);
    expect(res.body.message).toContain('per hour');
  });

  it('free: 1,000 per day across hours', async () => {
    toNextWindow(86_400);
    const c = await t.client('day-user', 'free');
    for (let hour = 0; hour < 10; hour++) {
      for (let minute = 0; minute < 10; minute++) {
        for (let i = 0; i < 10; i++) expect((await c.call('GET', '/media')).status).toBe(200);
        t.clock.advance(60_000);
      }
      t.clock.advance(3_600_000);
    }
    const res = await c.call('GET', '/media');
    const wait = Math.ceil((Math.ceil(t.clock.now() / 86_400_000) * 86_400_000 - t.clock.now()) / 1000);
    expect429(res, wait);
    expect(res.body.message).toContain('per day');
    toNextWindow(86_400);
    expect((await c.call('GET', '/media')).status).toBe(200);
  });

  // docs/api.md, "What counts against the rate limits": following work already counted, and
  // reading the account's own counters, never spend them.
  it('a generation’s status, the usage and an item’s download are not counted; the rest is', async () => {
    toNextWindow(86_400);
    const c = await t.client('follow-user', 'free');
    const made = await c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'counted once' });
    expect(made.status).toBe(200);
    const itemId = made.body.data[0].id as string;
    const queued = await c.call(
      'POST',
      '/videos/generations',
      { ...SMALL_VIDEO, prompt: 'followed for free' },
      { prefer: 'respond-async' },
    );
    expect(queued.status).toBe(202);
    const genId = queued.body.result.id as string;
    for (let i = 0; i < 8; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    expect((await c.call('GET', '/models')).status).toBe(429);
    for (const path of ['/usage', `/generations/${genId}`, `/media/${itemId}/content`]) {
      for (let i = 0; i < 3; i++) {
        const res = await c.call('GET', path);
        expect([path, res.status]).toEqual([path, 200]);
        expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      }
    }
    // What the usage reports is what was counted: 10 this minute, none of the reads above.
    const usage = await c.call('GET', '/usage');
    expect(usage.body.result.usage.requests.minute).toBe(10);
    for (const [method, path] of [
      ['GET', '/media'],
      ['GET', `/media/${itemId}`],
      ['GET', '/providers'],
      ['GET', '/generations'],
    ] as const)
      expect([path, (await c.call(method, path)).status]).toEqual([path, 429]);
  });

  it('basic tier has its own numbers', async () => {
    toNextWindow(86_400);
    const c = await t.client('basic-user', 'basic');
    for (let i = 0; i < TIERS.basic.rate.minute; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    expect((await c.call('GET', '/models')).status).toBe(429);
    await t.service.setTier('basic-user', 'pro');
    expect((await c.call('GET', '/models')).status).toBe(200);
  });
});

describe('storage quota', () => {
  it('reserved upload sizes count; the quota answers 429 with retry_after', async () => {
    toNextWindow(86_400);
    const c = await t.client('quota-user', 'free');
    // Free: 1 GB. Ten 100 MB upload tickets reserve all of it.
    for (let i = 0; i < 10; i++) {
      const res = await c.call('POST', '/media/upload', {
        filename: `v${i}.mp4`,
        mime: 'video/mp4',
        size: 100_000_000,
      });
      expect(res.status).toBe(200);
    }
    t.clock.advance(60_000);
    const over = await c.call('POST', '/media/upload', { filename: 'x.png', mime: 'image/png', size: 1 });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('rate_limit_exceeded');
    expect(Number.isInteger(over.body.retry_after)).toBe(true);
    expect(over.body.message).toMatch(/storage quota/i);
    expect(over.body.message).toContain(`${over.body.retry_after} second`);
    const gen = await c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'no room' });
    expect(gen.status).toBe(429);
    expect(gen.body.message).toMatch(/storage quota/i);
    // Tickets expire after 15 minutes; the reservation goes with them.
    t.clock.advance(16 * 60_000);
    const ok = await c.call('POST', '/media/upload', { filename: 'x.png', mime: 'image/png', size: 1 });
    expect(ok.status).toBe(200);
  });
});

describe('concurrent generations', () => {
  it('free: one video at a time; the second gets 429 while the first runs', async () => {
    toNextWindow(86_400);
    const c = await t.client('busy-user', 'free');
    const first = c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'first of two' });
    // Wait until the service reports it running (no sleeps on wall time for the limit itself).
    for (let i = 0; i < 500 && t.service.stats.running('busy-user', 'video') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(t.service.stats.running('busy-user', 'video')).toBe(1);
    const second = await c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'second of two' });
    expect(second.status).toBe(429);
    expect(second.body.code).toBe('rate_limit_exceeded');
    expect(second.body.message).toContain(`${second.body.retry_after} second`);
    const usage = await c.call('GET', '/usage');
    expect(usage.body.result.usage.running.video).toBe(1);
    expect((await first).status).toBe(200);
    expect(t.service.stats.maxConcurrent('busy-user', 'video')).toBe(1);
    expect(t.service.stats.running('busy-user', 'video')).toBe(0);
  });
});
