import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ServiceContext } from '../../../server/context.ts';
import { onPostgres, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';
import { until } from '../../support/until.ts';

/**
 * How often a generation reads the nodes' shared provider health (`provider_health`, read by
 * ProviderHealthTracker.refresh before routing): once per plan, and again only when the run waited
 * for a concurrency slot since (a cooldown another node started meanwhile must count). The reads
 * are counted on the nodes' own database handles (the tracker reads through the node's handle;
 * startService's onContext test hook hands them over), calls passing through unchanged.
 *
 * PostgreSQL only: on SQLite (one node) provider health is memory and never read from the database.
 */
const IMAGE = { model: 'clipdesk/still', prompt: 'a kite over dunes', size: '256x256' };
const HEALTH_READ = /FROM provider_health/;

describe.skipIf(!onPostgres)('provider health reads per generation (PostgreSQL)', () => {
  let svc: TestService;
  const contexts: ServiceContext[] = [];
  let reads = 0;

  beforeAll(async () => {
    svc = await startTestService({ nodes: 2, onContext: (ctx) => contexts.push(ctx) });
    for (const ctx of contexts) {
      const all = ctx.db.all.bind(ctx.db);
      vi.spyOn(ctx.db, 'all').mockImplementation((sql, ...args) => {
        if (HEALTH_READ.test(sql)) reads++;
        return all(sql, ...args);
      });
    }
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await svc?.stop();
  });

  async function finished(client: TestClient, id: string): Promise<string> {
    return until(`generation ${id} to end`, async () => {
      const status = (await client.call('GET', `/generations/${id}`)).body.result.status as string;
      return ['succeeded', 'failed', 'canceled'].includes(status) ? status : undefined;
    });
  }

  it('a synchronous generation reads it once where it is accepted and once where it runs', async () => {
    // On PostgreSQL a synchronous request is a row and a queue job too (sync-generation.ts).
    const client = await svc.client('health-sync');
    reads = 0;
    const res = await client.call('POST', '/images/generations', IMAGE);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(reads).toBe(2);
  });

  it('an asynchronous generation reads it once where it is accepted and once where it runs', async () => {
    const client = await svc.client('health-async');
    reads = 0;
    const accepted = await client.call('POST', '/images/generations', IMAGE, { prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    expect(await finished(client, accepted.body.result.id as string)).toBe('succeeded');
    expect(reads).toBe(2);
  });

  it('an asynchronous generation that waited for its concurrency slot reads it again before it runs', async () => {
    const client = await svc.client('health-waited');
    await svc.service.setLimits(client.user, { images: 1 });
    // Every refusal of a slot to this account, on either node (calls pass through).
    let refused = 0;
    for (const ctx of contexts) {
      const tryAcquire = ctx.concurrency.tryAcquire.bind(ctx.concurrency);
      vi.spyOn(ctx.concurrency, 'tryAcquire').mockImplementation(async (user, kind, limit) => {
        const slot = await tryAcquire(user, kind, limit);
        if (slot === null && user === client.user) refused++;
        return slot;
      });
    }
    const held = await contexts[0]!.concurrency.tryAcquire(client.user, 'image', 1);
    expect(held).not.toBeNull();
    reads = 0;
    const accepted = await client.call('POST', '/images/generations', IMAGE, { prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    await until('the generation to wait for its slot', () => (refused > 0 ? true : undefined));
    held!();
    expect(await finished(client, accepted.body.result.id as string)).toBe('succeeded');
    expect(reads).toBe(3);
  });
});
