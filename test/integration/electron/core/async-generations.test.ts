// Asynchronous generations from the app's side (docs/workflows.md): the API client and the job queue against
// the real Local engine on loopback (real HTTP, SQLite, ffmpeg) and a real SQLite journal. Where a
// generation must stay running (queue positions, a core restart, cancel), it runs at "Acme", the
// made-up provider's loopback fake (test/support/remote), so the test decides when it finishes.
// What the service did is read from the service (its generation records) and from Acme's jobs.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, realSleep } from '../../../../electron/core/api/index.ts';
import type { ApiClient, WaitNotice } from '../../../../electron/core/api/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../../../../electron/core/jobs/index.ts';
import type { QueueEvent } from '../../../../electron/core/jobs/index.ts';
import { GENERATION_STATUSES } from '../../../../shared/api/index.ts';
import type { Generation } from '../../../../shared/api/index.ts';
import { olderService, pollThrottlingProxy } from '../../../support/other-services.ts';
import { acmeProvider } from '../../../support/remote/acme-adapter.ts';
import { startAcmeFake } from '../../../support/remote/fake-provider.ts';
import type { AcmeFake, JobPlan } from '../../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../../support/remote/media.ts';
import type { SampleMedia } from '../../../support/remote/media.ts';
import { startTestService } from '../../server/helpers.ts';
import type { TestClient, TestService } from '../../server/helpers.ts';

let dir: string;
let media: SampleMedia;
let t: TestService | undefined;
let fake: AcmeFake | undefined;
const clients: ApiClient[] = [];

beforeAll(async () => {
  media = await sampleMedia();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-'));
});
const proxies: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.dispose();
  for (const p of proxies.splice(0)) await p.close();
  await t?.stop();
  await fake?.close();
  t = undefined;
  fake = undefined;
  await rm(dir, { recursive: true, force: true });
});

interface Setup {
  /** What Acme's jobs do (default: succeed on the second poll). */
  plan?: Partial<JobPlan>;
  /** Queue positions Acme reports for each job before it runs (e.g. [2, 1]). */
  queue?: number[];
  /** Talk to the service through another implementation that answers the first poll 429. */
  throttledPolls?: boolean;
}

/**
 * The real service with Acme registered, an enterprise user `ada` (1,000 requests a minute; the
 * service's clock stands still), an owner's test client `c` and the app's API client `api`. The
 * API client's sleeps move the service's clock too, so a Retry-After is waited out without
 * sitting through it.
 */
async function setup(options: Setup = {}) {
  const acme = await startAcmeFake();
  fake = acme;
  acme.files.set('clip.mp4', { body: media.mp4 });
  acme.plan = { polls: 1, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.01, ...options.plan };
  const made = acmeProvider({
    models: [{ model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p'] }],
  });
  // Acme's API has no queue positions; this adapter adds them, as Runway's and Luma's report theirs.
  const positions = new Map<string, number>();
  const poll: typeof made.adapter.poll = async (settings, job, signal) => {
    const status = await made.adapter.poll(settings, job, signal);
    const seen = positions.get(job.id) ?? 0;
    const position = options.queue?.[seen];
    if (position === undefined || (status.status !== 'queued' && status.status !== 'running')) return status;
    positions.set(job.id, seen + 1);
    return { status: 'queued', position };
  };
  const service = await startTestService({
    remoteProviders: [{ ...made, adapter: { ...made.adapter, poll } }],
    providerKeys: { luma: acme.key },
    providerBaseUrls: { luma: acme.baseUrl },
    // Slower than the app's polls, so the app sees every position the provider reports.
    remoteTimings: { pollInitialMs: 100, pollMaxMs: 100, jitter: 0, stallMs: 2_000, requestTimeoutMs: 5_000 },
  });
  t = service;
  const c = await service.client('ada', 'enterprise');
  let baseUrl = service.service.url;
  if (options.throttledPolls) {
    const proxy = await pollThrottlingProxy(service.service.url);
    proxies.push(proxy);
    baseUrl = proxy.url;
  }
  const api = createApiClient({
    baseUrl,
    getKey: () => c.key,
    poll: { initialMs: 5, maxMs: 20 },
    sleep: (ms, signal) => {
      service.clock.advance(ms);
      return realSleep(Math.min(ms, 20), signal);
    },
  });
  clients.push(api);
  return { t: service, fake: acme, c, api };
}

const journalAt = (name: string) =>
  createJobJournal({ db: openJournalDatabase(join(dir, name)), now: () => Date.now() });
const video = (prompt: string) => ({ model: 'clipdesk/motion', prompt, size: '360p', duration: 2, provider: 'acme' });

/** The service's own records of the caller's generations, newest first. */
async function generations(c: TestClient): Promise<Generation[]> {
  const res = await c.call('GET', '/generations?limit=100');
  expect(res.status).toBe(200);
  return res.body.result.generations as Generation[];
}

async function statusOf(c: TestClient, id: string): Promise<string> {
  return ((await c.call('GET', `/generations/${id}`)).body.result as Generation).status;
}

/** Steps only ever move forward through the spec's order. */
function expectInOrder(statuses: string[]): void {
  const order = statuses.map((s) => GENERATION_STATUSES.indexOf(s as Generation['status']));
  expect(order).not.toContain(-1);
  expect(order).toEqual([...order].sort((a, b) => a - b));
}

/** Acme finishes its jobs, the running ones and any still to come, at their next poll. */
function finishAtAcme(acme: AcmeFake): void {
  acme.plan = { ...acme.plan, polls: 0, outcome: 'succeed' };
  for (const j of acme.jobs.values()) j.plan = { ...j.plan, polls: 0, outcome: 'succeed' };
}

describe('API client, asynchronous mode', () => {
  it('202 → polls GET /generations/:id through the steps → the result; the id is seen first, the key is kept', async () => {
    const { fake, c, api } = await setup({ queue: [2, 1], plan: { polls: 4 } });
    const accepted: Generation[] = [];
    const updates: Generation[] = [];
    const res = await api.generateVideo(video('a fox'), {
      idempotencyKey: 'k-1',
      onAccepted: (g) => accepted.push(g),
      onUpdate: (g) => updates.push(g),
    });
    expect(res.data).toHaveLength(1);
    expect(res.data[0]).toMatchObject({ media: 'video', prompt: 'a fox' });
    // Accepted (202) before anything ran: the service's record, queued.
    expect(accepted.map((g) => g.status)).toEqual(['queued']);
    const seen = updates.map((g) => `${g.status}${g.queuePosition ?? ''}`);
    expect(seen[0]).toBe('queued');
    expect(seen).toEqual(expect.arrayContaining(['queued2', 'queued1', 'generating']));
    expect(seen.at(-1)).toBe('succeeded');
    expectInOrder(updates.map((g) => g.status));
    expect(seen.indexOf('queued2')).toBeLessThan(seen.indexOf('queued1'));
    // One generation on the service, one job at the provider: one POST.
    expect((await generations(c)).map((g) => g.id)).toEqual([accepted[0]!.id]);
    expect(fake.submissions()).toBe(1);
    // The Idempotency-Key went with the POST: the same key again is the same generation.
    const again = await api.submitGeneration('videos.generations', video('a fox'), { idempotencyKey: 'k-1' });
    expect(again).toMatchObject({ async: true, generation: { id: accepted[0]!.id } });
    expect(fake.submissions()).toBe(1);
  });

  it('a service without async mode answers 200 to the same request: the result is used as before, no polling', async () => {
    const { t } = await setup();
    const older = await olderService(t.service.url);
    const c = await t.client('bo', 'enterprise');
    const api = createApiClient({ baseUrl: older.url, getKey: () => c.key, poll: { initialMs: 5, maxMs: 20 } });
    clients.push(api);
    try {
      const accepted: Generation[] = [];
      const res = await api.generateImage(
        { model: 'clipdesk/still', prompt: 'a lamp', n: 2, size: '256x256' },
        { idempotencyKey: 'k-2', onAccepted: (g) => accepted.push(g) },
      );
      expect(res.data).toHaveLength(2);
      expect(accepted).toEqual([]);
      expect(older.seen.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /images/generations']);
      const start = await api.submitGeneration('videos.generations', video('sync'), { idempotencyKey: 'k-3' });
      expect(start.async).toBe(false);
      expect(await generations(c)).toEqual([]);
    } finally {
      await older.close();
    }
  });

  it('a 429 while polling is waited out as Retry-After says, and the wait is announced with what it waits for', async () => {
    // Our service never rate-limits polling; another v1 implementation may (the proxy's one 429).
    const { api } = await setup({ plan: { polls: 2 }, throttledPolls: true });
    const waits: WaitNotice[] = [];
    const res = await api.generateVideo(video('patience'), {
      idempotencyKey: 'k-4',
      onWait: (w) => waits.push(w),
    });
    expect(res.data).toHaveLength(1);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ reason: 'rate_limit' });
    expect(waits[0]!.message).toMatch(/rate limit/i);
    expect(waits[0]!.what).toMatch(/^GET \/generations\/gen_\w+$/);
    expect(waits[0]!.ms).toBeGreaterThanOrEqual(1000);
  });

  it('get, list and cancel (DELETE) a generation: canceled on the service and at the provider', async () => {
    const { fake, c, api } = await setup({ plan: { outcome: 'never' } });
    const start = await api.submitGeneration('videos.generations', video('to cancel'), { idempotencyKey: 'k-5' });
    if (!start.async) throw new Error('expected 202');
    const id = start.generation.id;
    await expect.poll(async () => (await api.getGeneration(id)).status).toBe('generating');
    const canceled = await api.cancelGeneration(id);
    expect(canceled.status).toBe('canceled');
    expect(await statusOf(c, id)).toBe('canceled');
    await expect.poll(() => fake.cancels()).toBe(1);
    const list = await api.listGenerations({ status: 'canceled', limit: 10 });
    expect(list).toMatchObject({ total: 1 });
    expect(list.generations[0]!.id).toBe(id);
    await expect(api.getGeneration('gen_nope')).rejects.toMatchObject({ code: 'not_found_error' });
  });

  it('variations: POST /videos/variations with n, followed to n items that name their source', async () => {
    const { fake, c, api } = await setup();
    const source = await api.generateVideo(video('the source'), { idempotencyKey: 'k-src' });
    const sourceId = source.data[0]!.id;
    const res = await api.createVariations({ media_id: sourceId, n: 3, provider: 'acme' }, { idempotencyKey: 'k-6' });
    expect(res.data).toHaveLength(3);
    expect(res.data.map((d) => (d as { variationOf?: string }).variationOf)).toEqual([sourceId, sourceId, sourceId]);
    expect((await generations(c))[0]).toMatchObject({ operation: 'videos.variations', status: 'succeeded' });
    expect(fake.submissions()).toBe(4);
  });
});

describe('job queue, asynchronous mode', () => {
  it('stores the generation id at the 202, shows the real step and queue position, and ends done', async () => {
    const { api } = await setup({ queue: [3, 1], plan: { polls: 4 } });
    const journal = journalAt('steps.db');
    const seen: string[] = [];
    let queueRef: ReturnType<typeof createJobQueue> | null = null;
    const queue = createJobQueue({
      journal,
      api,
      limits: { video: 1, image: 1 },
      onEvent: (e: QueueEvent) => {
        if (e.type !== 'job' || !queueRef) return;
        const g = queueRef.progress(e.job.id).generation;
        if (g) seen.push(`${g.step}${g.queuePosition ?? ''}`);
      },
    });
    queueRef = queue;
    await queue.start();
    const job = queue.enqueue({ kind: 'video', request: video('steps') });
    await queue.idle();
    expect(queue.get(job.id)).toMatchObject({ state: 'done', generationId: null });
    const steps = [...new Set(seen)];
    expect(steps[0]).toBe('queued');
    expect(steps).toEqual(expect.arrayContaining(['queued3', 'queued1', 'generating']));
    expect(steps.indexOf('queued3')).toBeLessThan(steps.indexOf('queued1'));
    expect(steps.at(-1)).toBe('succeeded');
    expectInOrder(steps.map((s) => s.replace(/\d+$/, '')));
    expect(journal.transitions(job.id).map((t) => t.to)).toEqual(['queued', 'generating', 'done']);
    await queue.dispose();
  });

  it('a 429 while polling: the job says what it waits for and until when, then finishes', async () => {
    const { api } = await setup({ plan: { polls: 2 }, throttledPolls: true });
    const waits: { what: string; until: number }[] = [];
    let queueRef: ReturnType<typeof createJobQueue> | null = null;
    const queue = createJobQueue({
      journal: journalAt('wait.db'),
      api,
      limits: { video: 1, image: 1 },
      onEvent: (e) => {
        const wait = e.type === 'job' && queueRef ? queueRef.progress(e.job.id).generation?.wait : null;
        if (wait) waits.push(wait);
      },
    });
    queueRef = queue;
    await queue.start();
    const job = queue.enqueue({ kind: 'video', request: video('wait for it') });
    await queue.idle();
    expect(queue.get(job.id)!.state).toBe('done');
    expect(waits[0]!.what).toMatch(/^GET \/generations\/gen_\w+$/);
    expect(waits[0]!.until).toBeGreaterThan(Date.now() - 60_000);
    await queue.dispose();
  });

  it('a core restart mid-generation resumes polling the stored id: one generation on the service, one job at the provider', async () => {
    const { fake, c, api } = await setup({ plan: { outcome: 'never' } });
    const path = join(dir, 'restart.db');
    let accepted!: () => void;
    const gotId = new Promise<void>((resolve) => (accepted = resolve));
    const first = createJobQueue({
      journal: createJobJournal({ db: openJournalDatabase(path), now: () => Date.now() }),
      api,
      limits: { video: 1, image: 1 },
      onEvent: (e) => {
        if (e.type === 'job' && e.job.generationId) accepted();
      },
    });
    await first.start();
    const job = first.enqueue({ kind: 'video', request: video('survive a restart') });
    await gotId;
    const generationId = first.get(job.id)!.generationId!;
    // Mid-generation: running at the provider when the core stops.
    await expect.poll(() => statusOf(c, generationId)).toBe('generating');
    await first.dispose();
    expect(await statusOf(c, generationId)).toBe('generating');

    // The core starts again on the same journal; the provider finishes the job meanwhile.
    const journal = createJobJournal({ db: openJournalDatabase(path), now: () => Date.now() });
    expect(journal.get(job.id)).toMatchObject({ state: 'generating', generationId });
    finishAtAcme(fake);
    const second = createJobQueue({ journal, api, limits: { video: 1, image: 1 } });
    await second.start();
    await second.idle();
    expect(second.get(job.id)).toMatchObject({ state: 'done' });
    expect(second.get(job.id)!.result!.items).toHaveLength(1);
    expect(fake.submissions()).toBe(1);
    expect((await generations(c)).map((g) => g.id)).toEqual([generationId]);
    expect(journal.transitions(job.id).map((t) => t.to)).toEqual(['queued', 'generating', 'done']);
    await second.dispose();
  });

  it('kill -9 of the core right after the 202: the restarted core polls the id from the journal, no second POST', async () => {
    const { fake, c, api } = await setup({ plan: { outcome: 'never' } });
    const path = join(dir, 'killed.db');
    const child = spawn(
      process.execPath,
      [new URL('./async-queue-child.ts', import.meta.url).pathname, path, t!.service.url, c.key],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (l) => {
        if (l.startsWith('accepted ')) resolve(l);
      });
      child.once('exit', (code) => reject(new Error(`the child exited with ${code}`)));
    });
    const [, jobId, generationId] = line.split(' ') as [string, string, string];
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // Mid-generation: the service still works on it.
    await expect.poll(() => statusOf(c, generationId)).toBe('generating');

    const journal = createJobJournal({ db: openJournalDatabase(path), now: () => Date.now() });
    expect(journal.get(jobId)).toMatchObject({ state: 'generating', generationId });
    finishAtAcme(fake);
    const queue = createJobQueue({ journal, api, limits: { video: 1, image: 1 } });
    await queue.start();
    await queue.idle();
    expect(queue.get(jobId)).toMatchObject({ state: 'done' });
    expect(fake.submissions()).toBe(1);
    expect((await generations(c)).map((g) => g.id)).toEqual([generationId]);
    await queue.dispose();
  });

  it('a generation that fails on the service fails the job once, with the service’s message', async () => {
    const { fake, c, api } = await setup({ plan: { outcome: 'fail' } });
    const journal = journalAt('failed.db');
    const queue = createJobQueue({ journal, api, limits: { video: 1, image: 1 } });
    await queue.start();
    const job = queue.enqueue({ kind: 'video', request: video('doomed') });
    await queue.idle();
    const [record] = await generations(c);
    expect(record).toMatchObject({ status: 'failed' });
    expect(queue.get(job.id)).toMatchObject({
      state: 'failed',
      error: { code: 'provider_unavailable', message: record!.error!.message },
    });
    expect(journal.transitions(job.id).map((t) => t.to)).toEqual(['queued', 'generating', 'failed']);
    expect(fake.submissions()).toBe(1);
    await queue.dispose();
  });

  it('cancel in the app sends DELETE /generations/:id: canceled on the service and at the provider', async () => {
    const { fake, c, api } = await setup({ plan: { outcome: 'never' } });
    let accepted!: () => void;
    const gotId = new Promise<void>((resolve) => (accepted = resolve));
    const queue = createJobQueue({
      journal: journalAt('cancel.db'),
      api,
      limits: { video: 1, image: 1 },
      onEvent: (e) => {
        if (e.type === 'job' && e.job.generationId) accepted();
      },
    });
    await queue.start();
    const job = queue.enqueue({ kind: 'video', request: video('cancel me') });
    await gotId;
    const generationId = queue.get(job.id)!.generationId!;
    // Running at the provider, so the cancel has to reach it there too.
    await expect.poll(() => statusOf(c, generationId)).toBe('generating');
    queue.cancel(job.id);
    await queue.idle();
    await expect.poll(() => statusOf(c, generationId)).toBe('canceled');
    await expect.poll(() => fake.cancels()).toBe(1);
    expect(queue.get(job.id)).toMatchObject({ state: 'canceled' });
    await queue.dispose();
  });

  it('a variations job goes through /videos/variations and keeps its n items', async () => {
    const { c, api } = await setup();
    const source = await api.generateVideo(video('the source prompt'), { idempotencyKey: 'k-src' });
    const sourceId = source.data[0]!.id;
    const queue = createJobQueue({ journal: journalAt('variations.db'), api, limits: { video: 1, image: 1 } });
    await queue.start();
    const job = queue.enqueue({
      kind: 'video',
      request: { ...video('the source prompt'), n: 3 },
      variationOf: sourceId,
    });
    await queue.idle();
    expect(queue.get(job.id)).toMatchObject({ state: 'done', variationOf: sourceId });
    expect(queue.get(job.id)!.result!.items).toHaveLength(3);
    const [record] = await generations(c);
    expect(record).toMatchObject({ operation: 'videos.variations', status: 'succeeded' });
    expect(record!.data!.map((i) => [i.variationOf, i.prompt])).toEqual(
      Array.from({ length: 3 }, () => [sourceId, 'the source prompt']),
    );
    await queue.dispose();
  });
});
