import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRoundRobin } from '../../support/round-robin.ts';
import type { RoundRobin } from '../../support/round-robin.ts';
import { clientFor, onPostgres, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * GET /usage's per-key request counts (`usage.cost.byKey[].requests`) on two nodes of one service:
 * requests spread over both by the round-robin proxy, then /usage asked of each node directly. Each
 * node must report every request of the key, whichever node served it, and still after both nodes
 * are restarted. The nodes run with no sweep timer (startTestService), so nothing is saved in the
 * background: what one node has not written where the other reads would show.
 */
type KeyUsage = { keyId: string; requests: number };

async function requestsOf(client: TestClient, keyId: string): Promise<number> {
  const res = await client.call('GET', '/usage');
  expect(res.status).toBe(200);
  const byKey = res.body.result.usage.cost.byKey as KeyUsage[];
  const found = byKey.find((k) => k.keyId === keyId);
  if (!found) throw new Error(`key ${keyId} is not in /usage`);
  return found.requests;
}

describe.runIf(onPostgres)('per-key request counts across two nodes', () => {
  let a: TestService;
  let b: TestService;
  let proxy: RoundRobin;
  beforeAll(async () => {
    // nodes: 1 for each: this file builds its own pair, to ask each node directly.
    a = await startTestService({ nodes: 1 });
    b = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1, dataFolderLock: false });
    proxy = await startRoundRobin();
    proxy.route([a.service, b.service]);
  });
  afterAll(async () => {
    await proxy?.close();
    await b?.service.close();
    await a?.stop();
  });

  it('both nodes report the same count per key, which holds after both nodes restart; the rate headers count down as before', async () => {
    const worker = await a.service.createKey({ user: 'usage-nodes', tier: 'pro', name: 'worker' });
    const watcher = await a.service.createKey({ user: 'usage-nodes', tier: 'pro', name: 'watcher' });
    const spread = clientFor(`${proxy.origin}/v1`, worker.key);
    const remaining: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await spread.call('GET', '/models');
      expect(res.status).toBe(200);
      remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
    }
    expect(proxy.forwarded()).toEqual([4, 3]);
    // Pro: 100 a minute, the window closest to refusing; one count for the account across the nodes.
    expect(remaining).toEqual(['99', '98', '97', '96', '95', '94', '93']);

    const onA = clientFor(a.service.url, watcher.key);
    const onB = clientFor(b.service.url, watcher.key);
    expect(await requestsOf(onA, worker.id)).toBe(7);
    expect(await requestsOf(onB, worker.id)).toBe(7);
    // The asking key's own /usage reads are not counted (docs/api.md, "What counts against the rate
    // limits"); its other requests are, whichever node answered them.
    expect((await onA.call('GET', '/models')).status).toBe(200);
    expect((await onB.call('GET', '/models')).status).toBe(200);
    expect((await onB.call('GET', '/providers')).status).toBe(200);
    expect(await requestsOf(onA, watcher.id)).toBe(3);
    expect(await requestsOf(onB, watcher.id)).toBe(3);

    await b.service.close();
    await a.service.close();
    a = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1 });
    b = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1, dataFolderLock: false });
    expect(await requestsOf(clientFor(a.service.url, watcher.key), worker.id)).toBe(7);
    expect(await requestsOf(clientFor(b.service.url, watcher.key), worker.id)).toBe(7);
    expect(await requestsOf(clientFor(b.service.url, watcher.key), watcher.id)).toBe(3);
  });
});

describe('per-key request counts of one node', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ nodes: 1 });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('/usage counts every counted request of the key (not its own reads), and the count survives a stop (SIGTERM) and start', async () => {
    const c = await t.client('usage-one-node');
    for (let i = 0; i < 5; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    expect(await requestsOf(c, c.keyId)).toBe(5);
    await t.service.close();
    const dataDir = t.dataDir;
    t = { ...(await startTestService({ dataDir, clock: t.clock, nodes: 1 })) };
    expect(await requestsOf(clientFor(t.service.url, c.key), c.keyId)).toBe(5);
  });
});
