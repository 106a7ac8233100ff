import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_TTL_MS } from '../../../server/generation/idempotency.ts';
import { FINISHED_GENERATION_KEEP_MS } from '../../../server/retention/sweeper.ts';
import {
  endGeneration,
  getGeneration,
  insertGeneration,
  newGenerationId,
} from '../../../server/storage/generations.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import { openTestDatabase, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';
import { until } from '../../support/until.ts';

/**
 * Retention of finished generations (server/retention/sweeper.ts): a generation that ended stays
 * answerable for FINISHED_GENERATION_KEEP_MS after its end and is then removed by the sweep;
 * queued and running ones never are; and a repeat with the generation's Idempotency-Key inside
 * the idempotency window answers it, never running or charging again. On SQLite and (on that
 * pass) PostgreSQL.
 */
const IMAGE = { model: 'clipdesk/still', prompt: 'a harbour at dusk', size: '256x256' };
const DAY = 86_400_000;

let svc: TestService;
let db: SqlDatabase;
let client: TestClient;

beforeAll(async () => {
  svc = await startTestService();
  db = await openTestDatabase(svc.dataDir);
  client = await svc.client('kept-generations');
});
afterAll(async () => {
  await db?.close();
  await svc?.stop();
});

async function startAsync(key: string): Promise<{ status: number; id: string; replayed: boolean }> {
  const res = await client.call('POST', '/images/generations', IMAGE, {
    prefer: 'respond-async',
    'idempotency-key': key,
  });
  return {
    status: res.status,
    id: res.body.result?.id as string,
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}

async function charged(): Promise<{ items: number; cost: number }> {
  const items = await db.get<{ n: number }>('SELECT count(*) AS n FROM media WHERE user_id = ?', client.user);
  const key = await db.get<{ cost: number }>('SELECT cost FROM api_keys WHERE id = ?', client.keyId);
  return { items: Number(items!.n), cost: Number(key!.cost) };
}

/** A generation row written as the service writes one, `age` ms old; ended `failed` then when `ended`. */
async function storedGeneration(age: number, ended: boolean): Promise<string> {
  const id = newGenerationId();
  const at = svc.clock.now() - age;
  await insertGeneration(db, {
    id,
    user_id: client.user,
    key_id: client.keyId,
    operation: 'images.generations',
    request: JSON.stringify(IMAGE),
    webhook_url: null,
    created_at: at,
  });
  if (ended) await endGeneration(db, id, 'failed', { type: 'api_error', message: 'long ago' }, at);
  return id;
}

describe('retention of finished generations', () => {
  it('keeps a finished generation answerable, and its Idempotency-Key replaying it, for its keep; then removes it; never an open one', async () => {
    expect(FINISHED_GENERATION_KEEP_MS).toBeGreaterThanOrEqual(IDEMPOTENCY_TTL_MS);
    const first = await startAsync('kept-1');
    expect(first.status).toBe(202);
    const status = async (id: string) => {
      const res = await client.call('GET', `/generations/${id}`);
      return res.status === 200 ? (res.body.result.status as string) : res.status;
    };
    await until('the generation to succeed', async () => ((await status(first.id)) === 'succeeded' ? true : undefined));
    const paid = await charged();
    expect(paid.items).toBe(1);
    // Open for longer than any keep (a generation waiting for a slot, or one whose node is gone
    // and whose job is queued again), and one that ended long ago.
    const open = await storedGeneration(60 * DAY, false);
    const old = await storedGeneration(60 * DAY, true);

    // Inside the idempotency window, after a sweep: the repeat answers the first generation.
    svc.clock.advance(IDEMPOTENCY_TTL_MS - 60_000);
    await svc.service.sweepRetention();
    const repeat = await startAsync('kept-1');
    expect(repeat).toMatchObject({ status: 202, id: first.id, replayed: true });
    expect(await charged()).toEqual(paid);
    expect(await getGeneration(db, old)).toBeUndefined();
    expect((await getGeneration(db, open))?.status).toBe('queued');

    // Just before its keep ends it still answers; after, it is gone (404) and the open one stays.
    svc.clock.advance(FINISHED_GENERATION_KEEP_MS - IDEMPOTENCY_TTL_MS);
    await svc.service.sweepRetention();
    expect(await status(first.id)).toBe('succeeded');
    svc.clock.advance(2 * 60_000);
    await svc.service.sweepRetention();
    expect(await status(first.id)).toBe(404);
    expect((await getGeneration(db, open))?.status).toBe('queued');
    // Its items keep their own retention (the tier's), and nothing was charged by the sweep.
    expect(await charged()).toEqual(paid);
    // The key's window is long over: it may name a new request now.
    const reused = await startAsync('kept-1');
    expect(reused.status).toBe(202);
    expect(reused.id).not.toBe(first.id);
    await until('the new generation to end', async () =>
      ['succeeded', 'failed'].includes(String(await status(reused.id))) ? true : undefined,
    );
    await endGeneration(db, open, 'canceled', { type: 'canceled', message: 'test over' }, svc.clock.now());
  }, 120_000);
});
