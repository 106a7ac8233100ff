import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUOTA_RECHECK_SECONDS, estimateGenerationBytes } from '../../../server/limits/storage-quota.ts';
import { SMALL_VIDEO, makePng, single, startTestService } from './helpers.ts';
import type { ApiResponse, TestClient, TestService } from './helpers.ts';

let t: TestService;
let png: Buffer;
beforeAll(async () => {
  t = await startTestService();
  png = await readFile(await makePng(t.dataDir, 'quota.png', '40x30', 'teal'));
});
afterAll(async () => {
  await t.stop();
});

/** SMALL_VIDEO is 640×360 for 2 s: the estimate the service reserves for it. */
const SMALL_VIDEO_ESTIMATE = estimateGenerationBytes({ kind: 'video', width: 640, height: 360, duration: 2, count: 1 });

/** A user on the free tier with a tiny storage quota. */
async function userWithQuota(name: string, storage: number): Promise<TestClient> {
  const c = await t.client(name, 'free');
  expect(await t.service.setLimits(name, { storageBytes: storage, rpm: 1_000, rph: 10_000, rpd: 100_000 })).toBe(true);
  return c;
}

/** The record of a single-record answer (`result`, or `data` from older servers). */
function record(res: ApiResponse): Record<string, unknown> {
  return (res.body.result ?? res.body.data) as Record<string, unknown>;
}

function ticket(c: TestClient, size: number): Promise<ApiResponse> {
  return c.call('POST', '/media/upload', { filename: 'q.png', mime: 'image/png', size });
}

/** Uploads the test PNG and completes it: a stored item of png.length bytes. */
async function storedUpload(c: TestClient): Promise<{ id: string; expiresAt: string }> {
  const res = await ticket(c, png.length);
  expect(res.status).toBe(200);
  const { uploadUrl, headers, id } = record(res) as { uploadUrl: string; headers: Record<string, string>; id: string };
  const put = await fetch(uploadUrl, { method: 'PUT', body: new Uint8Array(png), headers });
  expect(put.status).toBe(200);
  const done = await c.call('POST', `/media/${id}`);
  expect(done.status).toBe(200);
  const item = single(done.body);
  return { id: item.id, expiresAt: String(item.expiresAt) };
}

function expectQuota429(res: ApiResponse): void {
  expect(res.status).toBe(429);
  expect(res.body.code).toBe('rate_limit_exceeded');
  expect(res.body.message).toMatch(/storage quota/i);
  expect(Number.isInteger(res.body.retry_after)).toBe(true);
  // The wait is stated once.
  const message = String(res.body.message);
  expect(message.match(/Retry after/g)).toHaveLength(1);
  expect(message).toContain(`Retry after ${res.body.retry_after} second`);
}

describe('storage quota: refused before it starts, never overshot', () => {
  it('an upload of exactly the remaining space is accepted; one byte more is refused', async () => {
    const exact = await userWithQuota('upload-exact', 1_000);
    expect((await ticket(exact, 600)).status).toBe(200);
    expect((await ticket(exact, 400)).status).toBe(200);
    const over = await userWithQuota('upload-over', 1_000);
    expect((await ticket(over, 600)).status).toBe(200);
    expectQuota429(await ticket(over, 401));
  });

  it('a generation whose estimate fits exactly runs; one byte less of quota refuses it before any work', async () => {
    const fits = await userWithQuota('gen-exact', SMALL_VIDEO_ESTIMATE);
    const ok = await fits.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'fits exactly' });
    expect(ok.status).toBe(200);
    const stored = (await fits.call('GET', '/usage')).body.result.usage.storageBytes as number;
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThanOrEqual(SMALL_VIDEO_ESTIMATE);

    const tight = await userWithQuota('gen-over', SMALL_VIDEO_ESTIMATE - 1);
    const refused = await tight.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'one byte short' });
    expectQuota429(refused);
    expect(refused.body.message).toContain(String(SMALL_VIDEO_ESTIMATE));
    expect(t.service.stats.maxConcurrent('gen-over', 'video')).toBe(0);
    const usage = (await tight.call('GET', '/usage')).body.result.usage;
    expect(usage.storageBytes).toBe(0);
    expect(usage.cost.total).toBe(0);
  });

  it('the last item cannot overshoot: an upload reservation leaves less than the estimate', async () => {
    const c = await userWithQuota('gen-after-upload', SMALL_VIDEO_ESTIMATE + 10);
    expect((await ticket(c, 11)).status).toBe(200);
    expectQuota429(await c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'would overshoot' }));
  });

  it('a running generation reserves its estimate until its items are stored', async () => {
    const c = await userWithQuota('gen-reserves', SMALL_VIDEO_ESTIMATE + 100);
    const running = c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'holding space' });
    for (let i = 0; i < 500 && t.service.stats.running('gen-reserves', 'video') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(t.service.stats.running('gen-reserves', 'video')).toBe(1);
    expect((await c.call('GET', '/usage')).body.result.usage.reservedBytes).toBe(SMALL_VIDEO_ESTIMATE);
    const refused = await ticket(c, 101);
    expectQuota429(refused);
    // Its reservation is released when it ends: a typical render time, not a retention period.
    expect(refused.body.retry_after).toBe(3);
    expect((await running).status).toBe(200);
    const usage = (await c.call('GET', '/usage')).body.result.usage;
    expect(usage.reservedBytes).toBe(0);
    expect((await ticket(c, SMALL_VIDEO_ESTIMATE + 100 - usage.storageBytes)).status).toBe(200);
  });
});

describe('storage quota: an honest retry_after', () => {
  it('when only downloaded or kept items fill it, the message says nothing will free on its own', async () => {
    const c = await userWithQuota('kept-full', png.length * 2);
    const downloaded = await storedUpload(c);
    expect((await c.call('GET', `/media/${downloaded.id}/content`)).status).toBe(200);
    const kept = await storedUpload(c);
    expect((await c.call('POST', `/media/${kept.id}/retain`, { forever: true })).status).toBe(200);
    const refused = await ticket(c, 1);
    expectQuota429(refused);
    expect(refused.body.message).toMatch(/nothing will free on its own/i);
    expect(refused.body.retry_after).toBe(QUOTA_RECHECK_SECONDS);
  });

  it('otherwise it is the time until enough frees: the expiry that covers the shortfall, not the next one', async () => {
    const c = await userWithQuota('expiring-full', png.length * 2);
    const first = await storedUpload(c);
    t.clock.advance(3_600_000);
    const second = await storedUpload(c);
    // One byte more than the first item frees: only the second expiry makes room.
    const refused = await ticket(c, png.length + 1);
    expectQuota429(refused);
    expect(refused.body.message).not.toMatch(/nothing will free/i);
    const wait = Math.ceil((Date.parse(second.expiresAt) - t.clock.now()) / 1000);
    expect(refused.body.retry_after).toBe(wait);
    // A small one is covered by the first expiry.
    const small = await ticket(c, 1);
    expect(small.body.retry_after).toBe(Math.ceil((Date.parse(first.expiresAt) - t.clock.now()) / 1000));
    // At that moment it fits, before the sweep has run.
    t.clock.set(Date.parse(first.expiresAt));
    expect((await ticket(c, 1)).status).toBe(200);
  });

  it('an upload ticket’s reservation is released when its URL expires (15 minutes)', async () => {
    const c = await userWithQuota('ticket-full', 1_000);
    expect((await ticket(c, 1_000)).status).toBe(200);
    t.clock.advance(60_000);
    const refused = await ticket(c, 1);
    expectQuota429(refused);
    expect(refused.body.retry_after).toBe(14 * 60);
  });

  it('an item larger than the whole quota is told it never fits', async () => {
    const c = await userWithQuota('too-big', 1_000);
    const refused = await ticket(c, 1_001);
    expectQuota429(refused);
    expect(refused.body.message).toMatch(/larger than the whole quota/);
  });
});
