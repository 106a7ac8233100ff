import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GENERATION_STATUSES,
  Generation,
  GenerationAccepted,
  GenerationListResponse,
} from '../../../shared/api/index.ts';
import { acmeProvider } from '../../support/remote/acme-adapter.ts';
import { startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import type { SampleMedia } from '../../support/remote/media.ts';
import { SMALL_VIDEO, clientFor, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

const ASYNC = { prefer: 'respond-async' };
const VIDEO = { ...SMALL_VIDEO, prompt: 'a lighthouse in the fog', seed: 7 };
const TIMINGS = { pollInitialMs: 5, pollMaxMs: 20, jitter: 0.2, stallMs: 500, requestTimeoutMs: 5_000 };

let t: TestService | undefined;
let fake: AcmeFake | undefined;
let media: SampleMedia;

beforeAll(async () => {
  media = await sampleMedia();
});
afterEach(async () => {
  await t?.stop();
  await fake?.close();
  t = undefined;
  fake = undefined;
});

/**
 * Polls GET /generations/:id until `done` holds for the record. Every poll counts against the rate
 * windows (the test clock stands still): the clients are enterprise keys, 1,000 requests a minute.
 */
async function poll(c: TestClient, id: string, done: (g: Generation) => boolean): Promise<Generation> {
  for (;;) {
    const res = await c.call('GET', `/generations/${id}`);
    expect(res.status).toBe(200);
    const g = Generation.parse(res.body.result);
    if (done(g)) return g;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The statuses a poller saw only ever move forward through the spec's steps. */
function expectInOrder(seen: string[]): void {
  const order = seen.map((s) => GENERATION_STATUSES.indexOf(s as Generation['status']));
  expect(order).not.toContain(-1);
  expect(order).toEqual([...order].sort((a, b) => a - b));
}

const final = (g: Generation) => ['succeeded', 'failed', 'canceled'].includes(g.status);

async function usageCost(c: TestClient): Promise<number> {
  const usage = await c.call('GET', '/usage');
  return usage.body.result.usage.cost.total as number;
}

async function mediaTotal(c: TestClient): Promise<number> {
  const list = await c.call('GET', '/media?user=me&limit=100');
  return list.body.result.total as number;
}

describe('asynchronous generations on the Local engine', () => {
  it('answers 202 with a Location, and the record ends with the synchronous answer’s data, price and stats', async () => {
    t = await startTestService();
    const c = await t.client('ada', 'enterprise');
    // Several preferences, unknown ones (with values and parameters) ignored, any case.
    const res = await c.call('POST', '/videos/generations', VIDEO, {
      prefer: 'handling=lenient, x-unknown="a,b"; p=1, Respond-Async; foo, wait=100',
    });
    expect(res.status).toBe(202);
    const accepted = GenerationAccepted.parse(res.body);
    expect(accepted.result.id).toMatch(/^gen_/);
    expect(accepted.result.status).toBe('queued');
    expect(accepted.result.operation).toBe('videos.generations');
    expect(res.headers.get('location')).toBe(`${t.service.url}/generations/${accepted.result.id}`);
    expect(res.headers.get('preference-applied')).toBe('respond-async');

    const seen: string[] = [];
    const done = await poll(c, accepted.result.id, (g) => (seen.push(g.status), final(g)));
    expect(done.status).toBe('succeeded');
    expect(done.data).toHaveLength(1);
    expectInOrder(seen);
    const item = done.data![0]!;
    const stored = await c.call('GET', `/media/${item.id}`);
    expect(stored.status).toBe(200);

    // The same request synchronously: the same shape, price and provider.
    const sync = await c.call('POST', '/videos/generations', VIDEO, { prefer: 'return=minimal' });
    expect(sync.status).toBe(200);
    expect(done.price).toBe(sync.body.price);
    expect(done.stats?.providerId).toBe(sync.body.stats.providerId);
    expect(Object.keys(done.stats ?? {}).sort()).toEqual(Object.keys(sync.body.stats as object).sort());
    expect(Object.keys(item).sort()).toEqual(Object.keys(sync.body.data[0] as object).sort());
    expect(item.prompt).toBe(VIDEO.prompt);
    expect(await usageCost(c)).toBeCloseTo((done.price ?? 0) + (sync.body.price as number), 6);

    const listed = await c.call('GET', '/generations?status=succeeded&limit=10');
    const list = GenerationListResponse.parse(listed.body);
    expect(list.result.total).toBe(1);
    expect(list.result.generations[0]?.id).toBe(done.id);
    const none = await c.call('GET', '/generations?status=failed');
    expect(none.body.result.total).toBe(0);
    expect((await c.call('GET', '/generations?status=nope')).status).toBe(400);
  });

  it('polling a generation does not spend the rate limit; other requests still do', async () => {
    t = await startTestService();
    // Free tier: 10 requests a minute, and the test clock stands still.
    const c = await t.client('fen', 'free');
    const res = await c.call(
      'POST',
      '/images/generations',
      { model: 'clipdesk/still', prompt: 'a pebble', size: '256x256' },
      ASYNC,
    );
    expect(res.status).toBe(202);
    const id = res.body.result.id as string;
    for (let i = 0; i < 30; i++) expect((await c.call('GET', `/generations/${id}`)).status).toBe(200);
    let refused = 0;
    for (let i = 0; i < 12; i++) if ((await c.call('GET', '/models')).status === 429) refused++;
    // 1 POST + 9 more fit in the minute; the other 3 are refused.
    expect(refused).toBe(3);
  });

  it('a repeat with the same Idempotency-Key returns the same generation; a different body is refused', async () => {
    t = await startTestService();
    const c = await t.client('bo', 'enterprise');
    const first = await c.call(
      'POST',
      '/images/generations',
      { model: 'clipdesk/still', prompt: 'a pear', size: '256x256' },
      {
        ...ASYNC,
        'idempotency-key': 'pear-1',
      },
    );
    expect(first.status).toBe(202);
    const again = await c.call(
      'POST',
      '/images/generations',
      { model: 'clipdesk/still', prompt: 'a pear', size: '256x256' },
      {
        ...ASYNC,
        'idempotency-key': 'pear-1',
      },
    );
    expect(again.status).toBe(202);
    expect(again.body.result.id).toBe(first.body.result.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await c.call(
      'POST',
      '/images/generations',
      { model: 'clipdesk/still', prompt: 'a plum', size: '256x256' },
      {
        ...ASYNC,
        'idempotency-key': 'pear-1',
      },
    );
    expect(other.status).toBe(400);
    const done = await poll(c, first.body.result.id as string, final);
    expect(done.status).toBe('succeeded');
    expect(await mediaTotal(c)).toBe(1);
    const list = await c.call('GET', '/generations');
    expect(list.body.result.total).toBe(1);
  });

  it('only the owner’s key sees or cancels a generation; bad input is a 400', async () => {
    // example.com as a public address, without a network: webhook targets are resolved and checked.
    t = await startTestService({ webhookLookup: () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]) });
    const owner = await t.client('cy', 'enterprise');
    const stranger = await t.client('dee', 'enterprise');
    const res = await owner.call('POST', '/videos/generations', VIDEO, ASYNC);
    const id = res.body.result.id as string;
    expect((await stranger.call('GET', `/generations/${id}`)).status).toBe(404);
    expect((await stranger.call('DELETE', `/generations/${id}`)).status).toBe(404);
    expect((await stranger.call('GET', '/generations')).body.result.total).toBe(0);
    // Another key of the same account (the app's and the CLI's, say) sees it.
    const sameUser = clientFor(t.service.url, (await t.service.createKey({ user: 'cy', tier: 'enterprise' })).key);
    expect((await sameUser.call('GET', `/generations/${id}`)).status).toBe(200);
    expect((await owner.call('GET', '/generations/gen_doesnotexist')).status).toBe(404);
    expect((await owner.call('GET', '/generations/med_x')).status).toBe(404);
    // A read-only key may look but not cancel.
    const created = await t.service.createKey({ user: 'cy', tier: 'enterprise', permissions: ['read'] });
    const reader = clientFor(t.service.url, created.key);
    expect((await reader.call('GET', `/generations/${id}`)).status).toBe(200);
    expect((await reader.call('DELETE', `/generations/${id}`)).status).toBe(403);
    await poll(owner, id, final);

    const badHook = await owner.call(
      'POST',
      '/videos/generations',
      { ...VIDEO, webhook_url: 'ftp://example.com/x' },
      ASYNC,
    );
    expect(badHook.status).toBe(400);
    expect(badHook.body.message).toMatch(/webhook_url/);
    const longHook = await owner.call(
      'POST',
      '/videos/generations',
      { ...VIDEO, webhook_url: `https://example.com/${'a'.repeat(2040)}` },
      ASYNC,
    );
    expect(longHook.status).toBe(400);
    const badModel = await owner.call('POST', '/videos/generations', { ...VIDEO, model: 'nope/none' }, ASYNC);
    expect(badModel.status).toBe(404);
    const withHook = await owner.call(
      'POST',
      '/videos/generations',
      { ...VIDEO, webhook_url: 'https://example.com/hook' },
      ASYNC,
    );
    expect(withHook.status).toBe(202);
    expect(withHook.body.result.webhookUrl).toBe('https://example.com/hook');
    await poll(owner, withHook.body.result.id as string, final);
  });
});

describe('canceling an asynchronous generation', () => {
  it('while generating at the provider and while queued behind it: canceled at the provider, nothing charged', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    fake.plan = { polls: 1_000_000, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.01 };
    const provider = acmeProvider({
      models: [{ model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p'] }],
    });
    t = await startTestService({
      remoteProviders: [provider],
      providerKeys: { luma: fake.key },
      providerBaseUrls: { luma: fake.baseUrl },
      remoteTimings: TIMINGS,
    });
    // One video at a time, so the second waits in our queue.
    const c = await t.client('eve', 'enterprise');
    await t.service.setLimits('eve', { videos: 1 });
    const request = { ...VIDEO, provider: 'acme' };
    const running = await c.call('POST', '/videos/generations', request, ASYNC);
    const queued = await c.call('POST', '/videos/generations', { ...request, seed: 8 }, ASYNC);
    expect(running.status).toBe(202);
    expect(queued.status).toBe(202);
    const generating = await poll(c, running.body.result.id as string, (g) => g.status === 'generating');
    expect(generating.status).toBe('generating');
    expect(fake.submissions()).toBe(1);
    expect((await poll(c, queued.body.result.id as string, () => true)).status).toBe('queued');

    const canceledQueued = await c.call('DELETE', `/generations/${queued.body.result.id}`);
    expect(canceledQueued.status).toBe(200);
    expect(canceledQueued.body.result.status).toBe('canceled');

    const canceled = await c.call('DELETE', `/generations/${running.body.result.id}`);
    expect(canceled.body.result.status).toBe('canceled');
    expect(canceled.body.result.error.type).toBe('canceled');
    while (fake.cancels() < 1) await new Promise((r) => setTimeout(r, 10));
    expect(fake.jobs.get('job_1')?.canceled).toBe(true);
    // The queued one never reached the provider; nothing stored, nothing charged.
    expect(fake.submissions()).toBe(1);
    expect(await mediaTotal(c)).toBe(0);
    expect(await usageCost(c)).toBe(0);
    // Canceling again answers the record as it is.
    const repeat = await c.call('DELETE', `/generations/${running.body.result.id}`);
    expect(repeat.body.result.status).toBe('canceled');
    const list = await c.call('GET', '/generations?status=canceled');
    expect(list.body.result.total).toBe(2);
    // The slot is free again: the next one runs.
    fake.plan = { polls: 1, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.01 };
    const next = await c.call('POST', '/videos/generations', { ...request, seed: 9 }, ASYNC);
    const done = await poll(c, next.body.result.id as string, final);
    expect(done.status).toBe('succeeded');
    expect(await usageCost(c)).toBeCloseTo(0.01, 6);
  });

  it('while a local render runs: the render stops, nothing is stored or charged', async () => {
    t = await startTestService();
    const c = await t.client('fay', 'enterprise');
    // The longest, largest render the model offers, so it is still running when canceled.
    const res = await c.call(
      'POST',
      '/videos/generations',
      { model: 'clipdesk/motion', size: '1080p', duration: 8, prompt: 'a slow render' },
      ASYNC,
    );
    const id = res.body.result.id as string;
    await poll(c, id, (g) => g.status !== 'queued');
    const canceled = await c.call('DELETE', `/generations/${id}`);
    expect(canceled.body.result.status).toBe('canceled');
    // It stays canceled once the aborted render has unwound.
    await new Promise((r) => setTimeout(r, 200));
    expect((await poll(c, id, () => true)).status).toBe('canceled');
    expect(await mediaTotal(c)).toBe(0);
    expect(await usageCost(c)).toBe(0);
  });
});

describe('POST /videos/variations', () => {
  it('makes n videos of the caller’s video with new seeds, recording the lineage; bad n and foreign ids are refused', async () => {
    t = await startTestService();
    const c = await t.client('gus', 'enterprise');
    const other = await t.client('hal', 'enterprise');
    const source = await c.call('POST', '/videos/generations', { ...VIDEO, public: true });
    expect(source.status).toBe(200);
    const sourceId = source.body.data[0].id as string;

    const res = await c.call('POST', '/videos/variations', { media_id: sourceId, n: 3 });
    expect(res.status).toBe(200);
    const items = res.body.data as Array<{ id: string; variationOf: string; prompt: string; model: string }>;
    expect(items).toHaveLength(3);
    expect(new Set(items.map((i) => i.id)).size).toBe(3);
    for (const item of items) {
      expect(item.variationOf).toBe(sourceId);
      expect(item.prompt).toBe(VIDEO.prompt);
      expect(item.model).toBe(VIDEO.model);
      const got = await c.call('GET', `/media/${item.id}`);
      expect(got.body.result.variationOf).toBe(sourceId);
      expect(got.body.result.modelSlug).toBe(source.body.data[0].modelSlug ?? got.body.result.modelSlug);
    }
    // Three items, each charged once.
    expect(res.body.price).toBeCloseTo(3 * (items[0] as unknown as { price: number }).price, 6);
    // Different seeds make different videos.
    const bytes = await Promise.all(
      items.map(async (i) => (await fetch((i as unknown as { url: string }).url)).arrayBuffer()),
    );
    expect(Buffer.from(bytes[0]!).equals(Buffer.from(bytes[1]!))).toBe(false);
    expect((await c.call('GET', `/media/${sourceId}`)).body.result.variationOf).toBeUndefined();

    const prompted = await c.call('POST', '/videos/variations', { media_id: sourceId, prompt: 'the fog lifts' }, ASYNC);
    expect(prompted.status).toBe(202);
    expect(prompted.body.result.operation).toBe('videos.variations');
    const done = await poll(c, prompted.body.result.id as string, final);
    expect(done.status).toBe('succeeded');
    expect(done.data?.[0]?.prompt).toBe('the fog lifts');
    expect(done.data?.[0]?.variationOf).toBe(sourceId);

    expect((await c.call('POST', '/videos/variations', { media_id: sourceId, n: 5 })).status).toBe(400);
    expect((await c.call('POST', '/videos/variations', { media_id: sourceId, n: 0 })).status).toBe(400);
    // Someone else's item, even a public one, is not found; so is one that does not exist.
    expect((await other.call('POST', '/videos/variations', { media_id: sourceId, n: 1 })).status).toBe(404);
    expect((await other.call('POST', '/videos/variations', { media_id: sourceId }, ASYNC)).status).toBe(404);
    expect((await c.call('POST', '/videos/variations', { media_id: 'med_nothere' })).status).toBe(404);
    expect(await mediaTotal(other)).toBe(0);
  });
});

describe('variations through a remote provider', () => {
  it('submit one job per variation, with new seeds, and report the provider’s queue position and progress', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    fake.plan = { polls: 3, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.002 };
    const made = acmeProvider({
      models: [{ model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p'] }],
    });
    const seen: string[] = [];
    // The fake reports no position or progress: this adapter adds them, as Runway's and Luma's do.
    // The seeds each job was asked for (Acme's API has no seed field).
    const seeds: Array<number | undefined> = [];
    const submit: typeof made.adapter.submit = (settings, task) => {
      seeds.push(task.seed);
      return made.adapter.submit(settings, task);
    };
    const reporting: typeof made.adapter.poll = async (settings, job, signal) => {
      const status = await made.adapter.poll(settings, job, signal);
      return status.status === 'queued'
        ? { ...status, position: 2 }
        : status.status === 'running'
          ? { ...status, progress: 0.5 }
          : status;
    };
    t = await startTestService({
      remoteProviders: [{ ...made, adapter: { ...made.adapter, poll: reporting, submit } }],
      providerKeys: { luma: fake.key },
      providerBaseUrls: { luma: fake.baseUrl },
      remoteTimings: { ...TIMINGS, pollInitialMs: 150, pollMaxMs: 150 },
    });
    const c = await t.client('ivy', 'enterprise');
    const source = await c.call('POST', '/videos/generations', { ...VIDEO, provider: 'acme' });
    expect(source.status).toBe(200);
    const sourceId = source.body.data[0].id as string;
    const res = await c.call('POST', '/videos/variations', { media_id: sourceId, n: 2, provider: 'acme' }, ASYNC);
    expect(res.status).toBe(202);
    const done = await poll(c, res.body.result.id as string, (g) => {
      seen.push(`${g.status}:${g.queuePosition ?? ''}:${g.progress ?? ''}`);
      return final(g);
    });
    expect(done.status).toBe('succeeded');
    expect(done.data?.map((i) => i.variationOf)).toEqual([sourceId, sourceId]);
    expect(done.price).toBeCloseTo(0.004, 6);
    expect(seen).toContain('queued:2:');
    expect(seen).toContain('generating::0.5');
    expectInOrder(seen.map((s) => s.split(':')[0] ?? ''));
    expect(fake.submissions()).toBe(3);
    expect(seeds).toHaveLength(3);
    expect(seeds[2]).toBe((seeds[1] ?? -1) + 1);
    expect(await usageCost(c)).toBeCloseTo(0.006, 6);
  });
});

describe('the OpenAPI document', () => {
  it('lists the asynchronous routes, the Prefer header and the 202 answer', async () => {
    t = await startTestService();
    const doc = (await (await fetch(`${t.service.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<{ name: string }>; responses?: object }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/generations', '/generations/{id}', '/videos/variations']),
    );
    expect(doc.paths['/generations/{id}']).toHaveProperty('delete');
    for (const path of ['/videos/generations', '/images/generations', '/videos/variations']) {
      const post = doc.paths[path]?.['post'];
      expect(post?.parameters?.map((p) => p.name)).toContain('Prefer');
      expect(post?.responses).toHaveProperty('202');
    }
    expect(doc.components.schemas).toHaveProperty('GenerationRecord');
  });
});
