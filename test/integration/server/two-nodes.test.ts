import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMALL_VIDEO, clientFor, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

/**
 * Two nodes of one service: two services on one database (the data directory's SQLite file, or on
 * the PostgreSQL pass one PostgreSQL database) with requests alternating between them. The rate
 * windows are counted in the database by one atomic statement and running generations are leased
 * rows there, so the limits hold across the nodes (and the windows across restarts of both).
 */
let a: TestService;
let b: TestService;
// nodes: 1 for each: this file builds its own pair and tells apart which node a request went to.
beforeAll(async () => {
  a = await startTestService({ nodes: 1 });
  // A whole minute ahead, so the eleven requests below share one minute.
  const minute = 60_000;
  a.clock.set(Math.ceil(a.clock.now() / minute) * minute + 5_000);
  b = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1, dataFolderLock: false });
});
afterAll(async () => {
  await b.service.close();
  await a.stop();
});

describe('rate windows across two nodes', () => {
  it('a free key sending 11 requests across both nodes within a minute gets exactly one 429; the headers agree', async () => {
    const created = await a.service.createKey({ user: 'two-nodes', tier: 'free' });
    const nodes = [clientFor(a.service.url, created.key), clientFor(b.service.url, created.key)];
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push(await nodes[i % 2]!.call('GET', '/models'));
    expect(answers.map((r) => r.status)).toEqual([...Array<number>(10).fill(200), 429]);
    // Remaining counts down across the nodes as if one served them all.
    expect(answers.slice(0, 10).map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual([
      '9',
      '8',
      '7',
      '6',
      '5',
      '4',
      '3',
      '2',
      '1',
      '0',
    ]);
    expect(new Set(answers.map((r) => r.headers.get('x-ratelimit-reset'))).size).toBe(1);
  });

  it('the last request of a window goes to one node only, when both are asked at once', async () => {
    const created = await a.service.createKey({ user: 'two-nodes-race', tier: 'free' });
    const nodes = [clientFor(a.service.url, created.key), clientFor(b.service.url, created.key)];
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => nodes[i % 2]!.call('GET', '/models')));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(6);
  });

  it('restarting both nodes keeps the counts (GET /usage from either)', async () => {
    const created = await a.service.createKey({ user: 'two-nodes-restart', tier: 'free' });
    for (let i = 0; i < 4; i++)
      expect((await clientFor((i % 2 === 0 ? a : b).service.url, created.key).call('GET', '/models')).status).toBe(200);
    await b.service.close();
    await a.service.close();
    a = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1 });
    b = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1, dataFolderLock: false });
    for (const node of [a, b]) {
      const usage = await clientFor(node.service.url, created.key).call('GET', '/usage');
      // Reading the usage is not counted (docs/api.md): the four requests, from either node.
      expect(usage.body.result.usage.requests.minute).toBe(4);
      expect(usage.body.result.usage.requests.day).toBe(4);
    }
  });
});

describe('concurrency across two nodes', () => {
  it('a free key runs one video at a time whichever node it asks; /usage on the other node sees it running', async () => {
    const created = await a.service.createKey({ user: 'two-nodes-busy', tier: 'free' });
    const onA = clientFor(a.service.url, created.key);
    const onB = clientFor(b.service.url, created.key);
    const first = onA.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'first of two, on node A' });
    for (let i = 0; i < 500 && a.service.stats.running('two-nodes-busy', 'video') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(a.service.stats.running('two-nodes-busy', 'video')).toBe(1);
    const second = await onB.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'second, on node B' });
    expect(second.status).toBe(429);
    expect(second.body.code).toBe('rate_limit_exceeded');
    expect((await onB.call('GET', '/usage')).body.result.usage.running.video).toBe(1);
    expect((await first).status).toBe(200);
    // Released on A: B may run one now.
    expect((await onB.call('GET', '/usage')).body.result.usage.running.video).toBe(0);
    expect((await onB.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'third, on B' })).status).toBe(200);
  });
});
