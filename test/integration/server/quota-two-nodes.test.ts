import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateGenerationBytes } from '../../../server/limits/storage-quota.ts';
import { untilTrue } from '../../support/until.ts';
import { SMALL_VIDEO, clientFor, openTestDatabase, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * The storage quota across two nodes on one database (docs/service.md): upload tickets and running
 * generations are admitted under one per-account lock in the database (an advisory lock on
 * PostgreSQL, whose READ COMMITTED would otherwise let two nodes pass on the same space), and what
 * a running generation reserves is a row every node counts.
 */
let a: TestService;
let b: TestService;
beforeAll(async () => {
  a = await startTestService();
  b = await startTestService({ dataDir: a.dataDir, clock: a.clock, dataFolderLock: false });
});
afterAll(async () => {
  await b?.service.close();
  await a?.stop();
});

const SMALL_VIDEO_ESTIMATE = estimateGenerationBytes({ kind: 'video', width: 640, height: 360, duration: 2, count: 1 });

/** The same key on node A and node B, for an account with `storage` bytes of quota. */
async function onBothNodes(user: string, storage: number): Promise<[TestClient, TestClient]> {
  const created = await a.service.createKey({ user, tier: 'pro' });
  expect(await a.service.setLimits(user, { storageBytes: storage, rpm: 10_000, rph: 100_000, rpd: 1_000_000 })).toBe(
    true,
  );
  return [clientFor(a.service.url, created.key), clientFor(b.service.url, created.key)];
}

describe('storage quota across two nodes', () => {
  it('many tickets asked of both nodes at once never grant more than the quota', async () => {
    const size = 1_000;
    const quota = 12 * size;
    const nodes = await onBothNodes('tickets-race', quota);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        nodes[i % 2]!.call('POST', '/media/upload', { filename: `r${i}.png`, mime: 'image/png', size }),
      ),
    );
    const granted = answers.filter((r) => r.status === 200);
    expect(answers.filter((r) => r.status !== 200).map((r) => r.status)).toEqual(Array<number>(28).fill(429));
    // Exactly the quota: each ticket either fit or did not, one at a time.
    expect(granted.length * size).toBe(quota);
  });

  it("a generation running on node A holds its reservation on node B: B refuses what would pass A's reserve", async () => {
    const [onA, onB] = await onBothNodes('reserved-on-a', SMALL_VIDEO_ESTIMATE + 100);
    const running = onA.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'holding space on A' });
    for (let i = 0; i < 500 && a.service.stats.running('reserved-on-a', 'video') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(a.service.stats.running('reserved-on-a', 'video')).toBe(1);
    const usage = (await onB.call('GET', '/usage')).body.result.usage;
    expect(usage.reservedBytes).toBe(SMALL_VIDEO_ESTIMATE);
    const refused = await onB.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'would overshoot on B' });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/storage quota/);
    expect(b.service.stats.maxConcurrent('reserved-on-a', 'video')).toBe(0);
    expect((await running).status).toBe(200);
    // Released when A stored its items: B sees nothing reserved.
    expect((await onB.call('GET', '/usage')).body.result.usage.reservedBytes).toBe(0);
  });

  it("a dead node's reservation holds the space only until its lease lapses", async () => {
    const [onA, onB] = await onBothNodes('reserved-by-the-dead', 10_000);
    // What a node killed mid-generation leaves: its reservation row, never renewed nor deleted. Its
    // lease lapses in a second here, rather than the 30 s a live node's renewals extend.
    const db = await openTestDatabase(a.dataDir);
    const leaseUntil = Date.now() + 1_000;
    try {
      await db.run(
        "INSERT INTO storage_reservations (id, user_id, kind, bytes, node, lease_until) VALUES ('dead-1', ?, 'video', 10000, 'killed-node', ?)",
        'reserved-by-the-dead',
        leaseUntil,
      );
    } finally {
      await db.close();
    }
    const ticket = { filename: 'late.png', mime: 'image/png', size: 1 };
    expect((await onA.call('POST', '/media/upload', ticket)).status).toBe(429);
    expect((await onB.call('POST', '/media/upload', ticket)).status).toBe(429);
    await untilTrue('the dead reservation’s lease to lapse', () => Date.now() > leaseUntil);
    expect((await onB.call('GET', '/usage')).body.result.usage.reservedBytes).toBe(0);
    expect((await onA.call('POST', '/media/upload', ticket)).status).toBe(200);
  });
});
