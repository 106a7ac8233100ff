import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SWEEP_LEASE, SWEEP_LEASE_MS } from '../../../server/retention/sweeper.ts';
import { leaseHolder, takeLease } from '../../../server/storage/leases.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import { untilTrue } from '../../support/until.ts';
import { generated, listed, openTestDatabase, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * The retention sweeper on exactly one node at a time (docs/service.md): two nodes on one database (the
 * data directory's SQLite file, or one PostgreSQL database on that pass) and one store. A round
 * first takes the sweep's lease row; a node that finds it held skips the round and says so once.
 */
let a: TestService;
let b: TestService;
let db: SqlDatabase;
const logs = { a: [] as string[], b: [] as string[] };
const loggerOf = (into: string[]) => ({
  info: (m: string) => into.push(m),
  warn: (m: string) => into.push(m),
  error: (m: string) => into.push(m),
});
beforeAll(async () => {
  a = await startTestService({ retentionSecondsOverride: 5, logger: loggerOf(logs.a) });
  b = await startTestService({
    dataDir: a.dataDir,
    clock: a.clock,
    retentionSecondsOverride: 5,
    logger: loggerOf(logs.b),
    // Two nodes on one SQLite folder in one process, as the sweeper's lease is tested here; no
    // program can do this (docs/service.md, "One service per data folder").
    dataFolderLock: false,
  });
  db = await openTestDatabase(a.dataDir);
});
afterAll(async () => {
  await db?.close();
  await b?.service.close();
  await a?.stop();
});

/** `n` images of `c` made by one request each of up to four (clipdesk/still), on node A. */
async function images(c: TestClient, n: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < n) {
    const count = Math.min(4, n - ids.length);
    const res = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: `swept ${ids.length}`,
      size: '256x256',
      n: count,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(...generated(res.body).map((m) => m.id));
  }
  return ids;
}

const removed = (logs: string[]) => logs.filter((m) => /^retention removed/.test(m));
const skipped = (logs: string[]) => logs.filter((m) => /another node.* is sweeping/.test(m));

describe('the retention sweeper across two nodes', () => {
  it('both sweeping at once: the items are deleted once, by one node, and the other skips its round', async () => {
    const c = await a.client('swept-at-once');
    const ids = await images(c, 6);
    a.clock.advance(6_000);
    const [onA, onB] = await Promise.all([a.service.sweepRetention(), b.service.sweepRetention()]);
    expect([onA, onB].sort()).toEqual([0, 6]);
    const [sweeper, other] = onA === 6 ? [logs.a, logs.b] : [logs.b, logs.a];
    expect(removed(sweeper)).toEqual(['retention removed 6 item(s)']);
    expect(removed(other)).toEqual([]);
    expect(skipped(other)).toHaveLength(1);
    expect(listed((await c.call('GET', '/media?user=me&limit=100')).body)).toEqual([]);
    for (const id of ids) expect(await a.storedKeys(`media/${id}/`)).toEqual([]);
    // The lease is let go at the end of the round: the next round may run on either node.
    expect(await leaseHolder(db, SWEEP_LEASE, Date.now())).toBeNull();
  });

  it('a node killed while holding the sweep blocks it only until its lease lapses', async () => {
    const c = await a.client('swept-after-a-kill');
    await images(c, 2);
    a.clock.advance(6_000);
    // What a node killed mid-sweep leaves: its lease row, never renewed nor let go. Here with a
    // short lease rather than SWEEP_LEASE_MS, so the test waits one second, not two minutes.
    expect(SWEEP_LEASE_MS).toBeGreaterThan(1_000);
    expect(await takeLease(db, SWEEP_LEASE, 'killed-node', 1_000, Date.now())).toBe(true);
    const before = skipped(logs.b).length;
    expect(await b.service.sweepRetention()).toBe(0);
    expect(await b.service.sweepRetention()).toBe(0);
    // Said once, not every round.
    expect(skipped(logs.b).length - before).toBeLessThanOrEqual(1);
    expect(listed((await c.call('GET', '/media?user=me&limit=100')).body)).toHaveLength(2);
    await untilTrue(
      'the dead node’s sweep lease to lapse',
      async () => (await leaseHolder(db, SWEEP_LEASE, Date.now())) === null,
    );
    expect(await b.service.sweepRetention()).toBe(2);
    expect(listed((await c.call('GET', '/media?user=me&limit=100')).body)).toEqual([]);
    expect(await leaseHolder(db, SWEEP_LEASE, Date.now())).toBeNull();
  });
});
