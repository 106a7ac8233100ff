import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Generation } from '../../../shared/api/index.ts';
import { untilTrue } from '../../support/until.ts';
import { startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * One Idempotency-Key space for synchronous and asynchronous requests (docs/api.md): a key used in
 * both modes names one request, which runs and is charged once, whichever mode came first.
 */
const IMAGE = { model: 'clipdesk/still', prompt: 'one key, two modes', size: '64x64' };
const ASYNC = { prefer: 'respond-async' };

let t: TestService;
let c: TestClient;
beforeAll(async () => {
  t = await startTestService();
  c = await t.client('one-key-space', 'enterprise');
});
afterAll(async () => {
  await t.stop();
});

function ids(data: unknown): string[] {
  return (data as Array<{ id: string }>).map((d) => d.id);
}

async function mediaTotal(): Promise<number> {
  return (await c.call('GET', '/media?user=me&limit=1')).body.result.total as number;
}

async function finished(id: string): Promise<Generation> {
  let g: Generation | undefined;
  await untilTrue('the generation to end', async () => {
    g = Generation.parse((await c.call('GET', `/generations/${id}`)).body.result);
    return ['succeeded', 'failed', 'canceled'].includes(g.status);
  });
  return g!;
}

describe('one Idempotency-Key across synchronous and asynchronous requests', () => {
  it('asynchronous first: the synchronous repeat answers that generation’s result, made once', async () => {
    const before = await mediaTotal();
    const body = { ...IMAGE, seed: 1 };
    const accepted = await c.call('POST', '/images/generations', body, { ...ASYNC, 'idempotency-key': 'modes-a' });
    expect(accepted.status).toBe(202);
    const sync = await c.call('POST', '/images/generations', body, { 'idempotency-key': 'modes-a' });
    expect(sync.status).toBe(200);
    expect(sync.headers.get('idempotent-replayed')).toBe('true');
    const generation = await finished(accepted.body.result.id as string);
    expect(ids(sync.body.data)).toEqual(generation.data?.map((d) => d.id));
    expect(await mediaTotal()).toBe(before + 1);
  });

  it('synchronous first: the asynchronous repeat is a generation with that result, made once', async () => {
    const before = await mediaTotal();
    const body = { ...IMAGE, seed: 2 };
    const sync = await c.call('POST', '/images/generations', body, { 'idempotency-key': 'modes-b' });
    expect(sync.status).toBe(200);
    const accepted = await c.call('POST', '/images/generations', body, { ...ASYNC, 'idempotency-key': 'modes-b' });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('idempotent-replayed')).toBe('true');
    const generation = await finished(accepted.body.result.id as string);
    expect(generation.status).toBe('succeeded');
    expect(generation.data?.map((d) => d.id)).toEqual(ids(sync.body.data));
    expect(await mediaTotal()).toBe(before + 1);
  });

  it('the key with another body in the other mode is refused', async () => {
    await c.call('POST', '/images/generations', { ...IMAGE, seed: 3 }, { 'idempotency-key': 'modes-c' });
    const other = await c.call(
      'POST',
      '/images/generations',
      { ...IMAGE, seed: 4 },
      { ...ASYNC, 'idempotency-key': 'modes-c' },
    );
    expect(other.status).toBe(400);
    expect(other.body.message).toMatch(/already used with a different request/);
  });
});
