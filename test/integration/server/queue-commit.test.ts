import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceContext } from '../../../server/context.ts';
import {
  claimGeneration,
  getGeneration,
  insertGeneration,
  newGenerationId,
} from '../../../server/storage/generations.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import { onPostgres, openTestDatabase, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';
import { until } from '../../support/until.ts';

/**
 * The commit's refusal of a generation another queue attempt holds (docs/service.md, "Charged once"),
 * in the one order that reaches it: attempt A runs the generation, the lease moves to attempt B,
 * and only then does A commit. In practice each node's once-a-second look at its rows
 * (queued-generation.ts) stops a slow attempt first, so no end-to-end test forces this order;
 * here the test drives the real modules of two real nodes (runQueuedGeneration on each, and the
 * queue's claim of the row) and uses PostgreSQL's own locks to order the steps:
 * - A is held before any work by its account's one image slot, which the test holds;
 * - B's claim of the row is written in a transaction the test keeps open, so A's look at the row
 *   still sees itself as the owner while A renders and stores its files;
 * - A's commit then waits on the row's lock (its `SELECT … FOR UPDATE`), the test ends B's
 *   transaction, and A's commit reads the row as B's.
 * The node contexts come from startService's `onContext` test hook: a queue job cannot be handed
 * to a chosen node with a chosen attempt otherwise, and the claim cannot be held open.
 *
 * PostgreSQL only: on SQLite there is no queue and no second attempt (a generation runs in the
 * process that accepted it, and its commit has no lease owner to check).
 */
const REQUEST = { model: 'clipdesk/still', prompt: 'a lighthouse seen twice', size: '256x256' };

describe.skipIf(!onPostgres)("an older queue attempt's commit after another attempt took the generation", () => {
  let svc: TestService;
  let db: SqlDatabase;
  const contexts: ServiceContext[] = [];

  beforeAll(async () => {
    svc = await startTestService({ nodes: 2, onContext: (ctx) => contexts.push(ctx) });
    db = await openTestDatabase(svc.dataDir);
  });
  afterAll(async () => {
    await db?.close();
    await svc?.stop();
  });

  it("is refused: A stores and charges nothing, leaves no file, and B's commit succeeds, charged once", async () => {
    const [nodeA, nodeB] = contexts as [ServiceContext, ServiceContext];
    expect(nodeA).not.toBe(nodeB);
    const client = await svc.client('two-attempts');
    await svc.service.setLimits(client.user, { images: 1 });
    const id = newGenerationId();
    await insertGeneration(nodeA.db, {
      id,
      user_id: client.user,
      key_id: client.keyId,
      operation: 'images.generations',
      request: JSON.stringify(REQUEST),
      webhook_url: null,
      created_at: svc.clock.now(),
    });
    const attemptA = `${id}/0@node-a:1`;
    const attemptB = `${id}/1@node-b:2`;
    const cost = async () =>
      Number((await db.get<{ cost: number }>('SELECT cost FROM api_keys WHERE id = ?', client.keyId))!.cost);
    const items = async () =>
      Number((await db.get<{ n: number }>('SELECT count(*) AS n FROM media WHERE user_id = ?', client.user))!.n);

    const slot = await nodeA.concurrency.tryAcquire(client.user, 'image', 1);
    expect(slot).not.toBeNull();
    const runA = nodeA.generations.runQueued({
      generationId: id,
      attempt: attemptA,
      signal: new AbortController().signal,
      synchronous: false,
    });
    await until('attempt A to hold the row', async () =>
      (await getGeneration(db, id).then((r) => (r as { lease_owner?: string } | undefined)?.lease_owner)) === attemptA
        ? true
        : undefined,
    );
    await nodeB.db.transaction(async (tx) => {
      // B's takeover (as runQueuedGeneration writes it), not committed until A waits at its commit.
      expect(await claimGeneration(tx, id, attemptB)).toBe(true);
      slot!();
      await until('attempt A to wait at its commit for the row', async () => {
        const waiting = await db.get<{ n: number }>(
          `SELECT count(*) AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%FROM generations WHERE id = % FOR UPDATE%'`,
        );
        return Number(waiting!.n) > 0 ? true : undefined;
      });
    });
    // Refused: A ends as an attempt whose generation another holds ('lost'), writing nothing.
    await runA;
    const afterA = (await getGeneration(db, id)) as { lease_owner?: string; status: string; result: string | null };
    expect(afterA.lease_owner).toBe(attemptB);
    expect(afterA.status).not.toBe('succeeded');
    expect(afterA.result).toBeNull();
    expect(await items()).toBe(0);
    expect(await cost()).toBe(0);
    expect(await svc.storedKeys('media/')).toEqual([]);

    // B runs it again from the start and commits it.
    await nodeB.generations.runQueued({
      generationId: id,
      attempt: attemptB,
      signal: new AbortController().signal,
      synchronous: false,
    });
    const done = (await getGeneration(db, id))!;
    expect(done.status).toBe('succeeded');
    const result = JSON.parse(done.result!) as { data: Array<{ id: string }>; price: number };
    expect(result.data).toHaveLength(1);
    expect(await items()).toBe(1);
    expect(await cost()).toBeCloseTo(result.price, 6);
    const stored = await svc.storedKeys('media/');
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.every((key) => key.startsWith(`media/${result.data[0]!.id}/`))).toBe(true);
  }, 120_000);
});
