import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Generation, GenerationPlan, GenerationResponse } from '../../../../shared/api/index.ts';
import { ManualClock } from '../../../../shared/clock.ts';
import { createKey } from '../../../../server/auth/api-keys.ts';
import type { AuthenticatedKey } from '../../../../server/auth/api-keys.ts';
import { ApiError } from '../../../../server/errors.ts';
import { Generations } from '../../../../server/generation/generations.ts';
import { idempotencyEndpoint, idempotencyFingerprint } from '../../../../server/generation/idempotency.ts';
import { Canceled } from '../../../../server/generation/lease.ts';
import type { GenerationServices } from '../../../../server/generation/services.ts';
import { silentLogger } from '../../../../server/logger.ts';
import { openDatabase } from '../../../../server/storage/db.ts';
import { getGeneration, insertGeneration } from '../../../../server/storage/generations.ts';

/**
 * The Generations object without a running service (docs/architecture.md, "The Generations
 * object"): a real SQLite database, and only the services the paths under test read. What needs a
 * render or a provider (runs, fallbacks, remote jobs) is tested end to end in
 * test/integration/server/.
 */

const dir = mkdtempSync(join(tmpdir(), 'clipdesk-generations-object-'));
const db = openDatabase(dir);
const clock = new ManualClock(Date.UTC(2026, 0, 1));
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const shutdowns: AbortController[] = [];
afterEach(() => {
  for (const s of shutdowns.splice(0)) s.abort();
});

/** A Generations object on the shared database; `finished` records each end the webhook hook is told of. */
function generations(overrides: Partial<GenerationServices> = {}): {
  g: Generations;
  finished: Generation[];
} {
  const shutdown = new AbortController();
  shutdowns.push(shutdown);
  const finished: Generation[] = [];
  const unused = (what: string) =>
    new Proxy({}, { get: () => expect.unreachable(`${what} is not read on this path`) }) as never;
  const services: GenerationServices = {
    db,
    clock,
    layout: unused('layout'),
    blobs: unused('blobs'),
    signer: unused('signer'),
    concurrency: unused('concurrency'),
    reservations: unused('reservations'),
    catalog: unused('catalog'),
    runPipeline: () => expect.unreachable('the pipeline does not run on this path'),
    logger: silentLogger,
    shutdown: shutdown.signal,
    track: (work) => work,
    origin: () => 'http://127.0.0.1:1',
    imageFetch: unused('imageFetch'),
    providerHealth: unused('providerHealth'),
    remote: unused('remote'),
    generationFinished: (generation) => {
      finished.push(generation);
      return Promise.resolve();
    },
    checkWebhookTarget: (url) => Promise.resolve(url),
    ...overrides,
  };
  return { g: new Generations(services), finished };
}

const AUTH: AuthenticatedKey = {
  // Set to a real key's id (beforeAll): a resumed generation's key is looked up.
  keyId: '',
  keyName: 'test',
  user: 'ann',
  tier: 'free',
  limits: {} as AuthenticatedKey['limits'],
  permissions: new Set(),
};

beforeAll(async () => {
  AUTH.keyId = (await createKey(db, clock.now(), { user: AUTH.user })).id;
});

const REQUEST = { model: 'clipdesk/still', prompt: 'a lighthouse', size: '256x256' };

let made = 0;
async function queuedGeneration(options: { keyId?: string; plan?: GenerationPlan } = {}): Promise<string> {
  const id = `gen_unit${String(++made).padStart(4, '0')}`;
  await insertGeneration(db, {
    id,
    user_id: AUTH.user,
    key_id: options.keyId ?? AUTH.keyId,
    operation: 'images.generations',
    request: JSON.stringify(REQUEST),
    webhook_url: null,
    created_at: clock.now(),
    ...(options.plan ? { plan: options.plan } : {}),
  });
  return id;
}

const BODY: GenerationResponse = {
  success: true,
  data: [],
  price: 0.02,
  created: 1,
  stats: { setupTime: 0, processingTime: 0, generationTime: 1, retries: 0, providerId: 'clipdesk' },
};

describe('Generations.cancel', () => {
  it('ends a generation running here canceled, stops its run with Canceled, and tells the hook once', async () => {
    const { g, finished } = generations();
    const id = await queuedGeneration();
    const run = new AbortController();
    g.cancels.set(id, run);

    const answered = await g.cancel((await getGeneration(db, id))!);
    expect(answered.status).toBe('canceled');
    expect(run.signal.reason).toBeInstanceOf(Canceled);
    expect(finished.map((f) => [f.id, f.status])).toEqual([[id, 'canceled']]);

    // Final already: answered as it is, nothing told again.
    expect((await g.cancel((await getGeneration(db, id))!)).status).toBe('canceled');
    expect(finished).toHaveLength(1);
  });

  it('wakes a synchronous request of this service that waits for the end', async () => {
    const { g } = generations();
    const id = await queuedGeneration();
    const waiting = g.ends.until(id, new AbortController().signal);
    await g.cancel((await getGeneration(db, id))!);
    expect((await waiting)?.status).toBe('canceled');
  });

  it("does not reach another service's runs: each object keeps its own", async () => {
    const { g: one } = generations();
    const { g: other } = generations();
    const id = await queuedGeneration();
    const run = new AbortController();
    one.cancels.set(id, run);
    await other.cancel((await getGeneration(db, id))!);
    // The row is canceled (any node's DELETE does that); the run is stopped by its own service's
    // look at the row (row-watch.ts), not by another object's map.
    expect(run.signal.aborted).toBe(false);
  });
});

describe('Generations.resume (one node)', () => {
  it('ends failed what can no longer run: a revoked key, a model no longer in the catalog', async () => {
    const revoked = await queuedGeneration({ keyId: 'key_gone' });
    const plan: GenerationPlan = {
      kind: 'image',
      model: 'gone/model',
      version: '1',
      prompt: 'p',
      size: '256x256',
      width: 256,
      height: 256,
      duration: 0,
      count: 1,
      seed: 1,
      public: false,
      routing: 'optimal',
      parameters: {},
      pricedAudio: false,
      candidates: [{ provider: 'clipdesk', ignoredParameters: [] }],
      ranking: [{ provider: 'clipdesk', ignoredParameters: [] }],
    };
    const modelGone = await queuedGeneration({ plan });
    const { g, finished } = generations({
      catalog: { findModel: () => undefined } as unknown as GenerationServices['catalog'],
    });

    const resumed = await g.resume();
    expect(resumed.providerJobs).toBe(0);
    expect(resumed.generations).toBeGreaterThanOrEqual(2);
    const error = async (id: string) => {
      const row = (await getGeneration(db, id))!;
      expect(row.status).toBe('failed');
      return (JSON.parse(row.error!) as { message: string }).message;
    };
    expect(await error(revoked)).toContain('the key that made it was revoked');
    expect(await error(modelGone)).toContain('gone/model:1 is not in the catalog any more');
    expect(finished.map((f) => f.id)).toEqual(expect.arrayContaining([revoked, modelGone]));
  });
});

describe('Generations.accept with an Idempotency-Key', () => {
  it("answers with a synchronous request's recorded result as a succeeded generation, the same one on a repeat", async () => {
    const { g } = generations();
    const key = 'idem-accept-1';
    const fingerprint = idempotencyFingerprint(key, idempotencyEndpoint('images.generations'), REQUEST);
    await db.run(
      'INSERT INTO idempotency (user_id, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, 200, ?, ?)',
      AUTH.user,
      key,
      fingerprint,
      JSON.stringify(BODY),
      clock.now(),
    );
    const first = await g.accept(AUTH, 'images.generations', REQUEST, key);
    expect(first.replayed).toBe(true);
    expect(first.generation.status).toBe('succeeded');
    expect(first.generation.price).toBe(BODY.price);
    const again = await g.accept(AUTH, 'images.generations', REQUEST, key);
    expect(again.generation.id).toBe(first.generation.id);

    // The key with another body: the 400 a repeat with a different request gets.
    await expect(g.accept(AUTH, 'images.generations', { ...REQUEST, prompt: 'other' }, key)).rejects.toThrow(
      'Idempotency-Key was already used with a different request',
    );
  });
});

describe('Generations.keys (requests in flight by Idempotency-Key)', () => {
  it('a repeat while the first runs waits for it and is answered its result, run once', async () => {
    const { g } = generations();
    let release!: (body: GenerationResponse) => void;
    const run = vi.fn(() => new Promise<GenerationResponse>((resolve) => (release = resolve)));
    const first = g.keys.withIdempotency(AUTH, 'images', 'idem-flight-1', REQUEST, run);
    await vi.waitFor(() => expect(run).toHaveBeenCalledTimes(1));
    const repeat = g.keys.withIdempotency(AUTH, 'images', 'idem-flight-1', REQUEST, run);
    await expect(g.keys.withIdempotency(AUTH, 'images', 'idem-flight-1', { other: 1 }, run)).rejects.toBeInstanceOf(
      ApiError,
    );
    release(BODY);
    expect(await first).toEqual({ body: BODY, replayed: false });
    expect(await repeat).toEqual({ body: BODY, replayed: true });
    expect(run).toHaveBeenCalledTimes(1);
    // Recorded: a later repeat is answered from the database.
    expect(await g.keys.withIdempotency(AUTH, 'images', 'idem-flight-1', REQUEST, run)).toEqual({
      body: BODY,
      replayed: true,
    });
  });

  it("another service's object does not see this one's request in flight", async () => {
    const { g: one } = generations();
    const { g: other } = generations();
    const idem = { key: 'idem-flight-2', fingerprint: idempotencyFingerprint('idem-flight-2', 'images', REQUEST) };
    let release!: (body: GenerationResponse) => void;
    const running = one.keys.withIdempotency(
      AUTH,
      'images',
      idem.key,
      REQUEST,
      () => new Promise((r) => (release = r)),
    );
    await vi.waitFor(() => expect(one.keys.runningResult(AUTH.user, idem)).toBeDefined());
    expect(other.keys.runningResult(AUTH.user, idem)).toBeUndefined();
    release(BODY);
    await running;
    expect(one.keys.runningResult(AUTH.user, idem)).toBeUndefined();
  });

  it("runs one step at a time per (user, key), in arrival order, whatever the first step's outcome", async () => {
    const { g } = generations();
    const order: string[] = [];
    let open!: () => void;
    const first = g.keys.keyTurn('ann', 'k', async () => {
      order.push('first starts');
      await new Promise<void>((resolve) => (open = resolve));
      order.push('first ends');
      throw new Error('first failed');
    });
    const second = g.keys.keyTurn('ann', 'k', () => {
      order.push('second');
      return Promise.resolve(2);
    });
    const otherKey = g.keys.keyTurn('ann', 'other', () => {
      order.push('other key');
      return Promise.resolve(3);
    });
    await vi.waitFor(() => expect(order).toEqual(['first starts', 'other key']));
    open();
    await expect(first).rejects.toThrow('first failed');
    expect(await second).toBe(2);
    expect(await otherKey).toBe(3);
    expect(order).toEqual(['first starts', 'other key', 'first ends', 'second']);
  });
});

describe('Generations.handoff (what a synchronous request holds for its queued run)', () => {
  it('a run here takes the slot and reservation; the request lets go of them only if none did, once', () => {
    const { g } = generations();
    const slot = vi.fn();
    const unreserve = vi.fn();
    const releaseTaken = g.handoff.offer('gen_taken', { slot, unreserve });
    expect(g.handoff.take('gen_taken')).toEqual({ slot, unreserve });
    releaseTaken();
    expect(slot).not.toHaveBeenCalled();

    const releaseUntaken = g.handoff.offer('gen_untaken', { slot, unreserve });
    releaseUntaken();
    releaseUntaken();
    expect(slot).toHaveBeenCalledTimes(1);
    expect(unreserve).toHaveBeenCalledTimes(1);
    expect(g.handoff.take('gen_untaken')).toBeUndefined();
  });
});
