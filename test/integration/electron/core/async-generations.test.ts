// Asynchronous generations from the app's side (issue 13): the API client and the job queue
// against a loopback stand-in for a service version with async mode (test/support/async-standin.ts;
// the service's own implementation is built on another branch). Real HTTP, real SQLite journal.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, realSleep } from '../../../../electron/core/api/index.ts';
import type { ApiClient, WaitNotice } from '../../../../electron/core/api/index.ts';
import { createJobJournal, createJobQueue, openDatabase } from '../../../../electron/core/jobs/index.ts';
import type { QueueEvent } from '../../../../electron/core/jobs/index.ts';
import type { Generation } from '../../../../shared/api/index.ts';
import { STANDIN_KEY, startAsyncStandin } from '../../../support/async-standin.ts';
import type { Standin, StandinOptions } from '../../../support/async-standin.ts';

let dir: string;
let standin: Standin | null = null;
const clients: ApiClient[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-'));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.dispose();
  await standin?.close();
  standin = null;
  await rm(dir, { recursive: true, force: true });
});

async function setup(options: StandinOptions = {}) {
  standin = await startAsyncStandin(options);
  const api = createApiClient({
    baseUrl: standin.baseUrl,
    getKey: () => STANDIN_KEY,
    poll: { initialMs: 5, maxMs: 20 },
    // Retry-After: 1 is honoured, but the test does not sit through the whole second.
    sleep: (ms, signal) => realSleep(Math.min(ms, 20), signal),
  });
  clients.push(api);
  return { standin, api };
}

const journalAt = (name: string) => createJobJournal({ db: openDatabase(join(dir, name)), now: () => Date.now() });
const video = (prompt: string) => ({ model: 'clipdesk/motion', prompt, duration: 2 });

describe('API client, asynchronous mode', () => {
  it('202 → polls GET /generations/:id through every step → the result, with Prefer and the id seen first', async () => {
    const { standin, api } = await setup({ queue: [2, 1] });
    const accepted: Generation[] = [];
    const updates: Generation[] = [];
    const res = await api.generateVideo(video('a fox'), {
      idempotencyKey: 'k-1',
      onAccepted: (g) => accepted.push(g),
      onUpdate: (g) => updates.push(g),
    });
    expect(res.data).toHaveLength(1);
    expect(res.data[0]).toMatchObject({ media: 'video', prompt: 'a fox' });
    expect(accepted.map((g) => g.status)).toEqual(['queued']);
    expect(updates.map((g) => `${g.status}${g.queuePosition ?? ''}`)).toEqual([
      'queued',
      'queued2',
      'queued1',
      'generating',
      'transcoding',
      'thumbnail',
      'storing',
      'succeeded',
    ]);
    const post = standin.posts();
    expect(post).toHaveLength(1);
    expect(standin.requests[0]!.headers['prefer']).toBe('respond-async');
    expect(standin.requests[0]!.headers['idempotency-key']).toBe('k-1');
    expect(
      standin.requests.slice(1).every((r) => r.method === 'GET' && r.path === `/v1/generations/${accepted[0]!.id}`),
    ).toBe(true);
  });

  it('a service without async mode answers 200 to the same request: the result is used as before, no polling', async () => {
    const { standin, api } = await setup({ async: false });
    const accepted: Generation[] = [];
    const res = await api.generateImage(
      { model: 'clipdesk/still', prompt: 'a lamp', n: 2 },
      { idempotencyKey: 'k-2', onAccepted: (g) => accepted.push(g) },
    );
    expect(res.data).toHaveLength(2);
    expect(accepted).toEqual([]);
    expect(standin.requests.map((r) => r.method)).toEqual(['POST']);
    const start = await api.submitGeneration('videos.generations', video('sync'), { idempotencyKey: 'k-3' });
    expect(start.async).toBe(false);
  });

  it('a 429 while polling is waited out as Retry-After says, and the wait is announced with what it waits for', async () => {
    const { api } = await setup({ rateLimitPolls: 1 });
    const waits: WaitNotice[] = [];
    const res = await api.generateVideo(video('patience'), { idempotencyKey: 'k-4', onWait: (w) => waits.push(w) });
    expect(res.data).toHaveLength(1);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ reason: 'rate_limit', message: 'Too many requests' });
    expect(waits[0]!.what).toMatch(/^GET \/generations\/gen_\d+$/);
    expect(waits[0]!.ms).toBeGreaterThanOrEqual(1000);
  });

  it('get, list and cancel (DELETE) a generation; variations carry variationOf', async () => {
    const { standin, api } = await setup({ generatingPolls: 50 });
    const start = await api.submitGeneration('videos.generations', video('to cancel'), { idempotencyKey: 'k-5' });
    if (!start.async) throw new Error('expected 202');
    expect((await api.getGeneration(start.generation.id)).status).toBe('generating');
    const canceled = await api.cancelGeneration(start.generation.id);
    expect(canceled.status).toBe('canceled');
    expect(standin.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/generations/${start.generation.id}` });
    const list = await api.listGenerations({ status: 'canceled', limit: 10 });
    expect(list).toMatchObject({ total: 1 });
    expect(list.generations[0]!.id).toBe(start.generation.id);
    await expect(api.getGeneration('gen_nope')).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('variations: POST /videos/variations with n, followed to n items that name their source', async () => {
    const { standin, api } = await setup();
    const res = await api.createVariations({ media_id: 'med_src', n: 3 }, { idempotencyKey: 'k-6' });
    expect(res.data).toHaveLength(3);
    expect(res.data.map((d) => (d as { variationOf?: string }).variationOf)).toEqual(['med_src', 'med_src', 'med_src']);
    expect(standin.posts()[0]).toMatchObject({ path: '/v1/videos/variations', body: { media_id: 'med_src', n: 3 } });
  });
});

describe('job queue, asynchronous mode', () => {
  it('stores the generation id at the 202, shows the real step and queue position, and ends done', async () => {
    const { api } = await setup({ queue: [3, 1] });
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
    expect([...new Set(seen)]).toEqual([
      'queued',
      'queued3',
      'queued1',
      'generating',
      'transcoding',
      'thumbnail',
      'storing',
      'succeeded',
    ]);
    expect(journal.transitions(job.id).map((t) => t.to)).toEqual(['queued', 'generating', 'done']);
    await queue.dispose();
  });

  it('a 429 while polling: the job says what it waits for and until when, then finishes', async () => {
    const { api } = await setup({ rateLimitPolls: 1 });
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
    expect(waits[0]!.what).toMatch(/^GET \/generations\/gen_\d+$/);
    expect(waits[0]!.until).toBeGreaterThan(Date.now() - 60_000);
    await queue.dispose();
  });

  it('a core restart mid-generation resumes polling the stored id: one POST in the stand-in’s request log', async () => {
    const { standin, api } = await setup({ generatingPolls: 3 });
    const path = join(dir, 'restart.db');
    let accepted!: () => void;
    const gotId = new Promise<void>((resolve) => (accepted = resolve));
    const first = createJobQueue({
      journal: createJobJournal({ db: openDatabase(path), now: () => Date.now() }),
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
    standin.hold(generationId);
    await first.dispose();
    expect(standin.get(generationId)!.status).not.toBe('succeeded');

    // The core starts again on the same journal.
    const journal = createJobJournal({ db: openDatabase(path), now: () => Date.now() });
    expect(journal.get(job.id)).toMatchObject({ state: 'generating', generationId });
    standin.release(generationId);
    const second = createJobQueue({ journal, api, limits: { video: 1, image: 1 } });
    await second.start();
    await second.idle();
    expect(second.get(job.id)).toMatchObject({ state: 'done' });
    expect(second.get(job.id)!.result!.items).toHaveLength(1);
    expect(standin.posts()).toHaveLength(1);
    expect(standin.ids()).toEqual([generationId]);
    expect(journal.transitions(job.id).map((t) => t.to)).toEqual(['queued', 'generating', 'done']);
    await second.dispose();
  });

  it('kill -9 of the core right after the 202: the restarted core polls the id from the journal, no second POST', async () => {
    const { standin, api } = await setup({ generatingPolls: 200 });
    const path = join(dir, 'killed.db');
    const child = spawn(
      process.execPath,
      [new URL('./async-queue-child.ts', import.meta.url).pathname, path, standin.baseUrl, STANDIN_KEY],
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
    expect(['queued', 'generating']).toContain(standin.get(generationId)!.status);

    const journal = createJobJournal({ db: openDatabase(path), now: () => Date.now() });
    expect(journal.get(jobId)).toMatchObject({ state: 'generating', generationId });
    const queue = createJobQueue({ journal, api, limits: { video: 1, image: 1 } });
    await queue.start();
    await queue.idle();
    expect(queue.get(jobId)).toMatchObject({ state: 'done' });
    expect(standin.posts()).toHaveLength(1);
    expect(standin.ids()).toEqual([generationId]);
    await queue.dispose();
  });

  it('a generation that fails on the service fails the job once, with the service’s message (no polling loop)', async () => {
    const { standin, api } = await setup({ fail: { type: 'server', message: 'the provider gave up' } });
    const queue = createJobQueue({ journal: journalAt('failed.db'), api, limits: { video: 1, image: 1 } });
    await queue.start();
    const job = queue.enqueue({ kind: 'video', request: video('doomed') });
    await queue.idle();
    expect(queue.get(job.id)).toMatchObject({
      state: 'failed',
      error: { kind: 'provider_unavailable', message: 'the provider gave up' },
    });
    // queued → generating → failed: three polls, none after the final answer.
    expect(standin.requests.filter((r) => r.method === 'GET')).toHaveLength(2);
    expect(standin.posts()).toHaveLength(1);
    await queue.dispose();
  });

  it('cancel in the app sends DELETE /generations/:id and the job ends canceled', async () => {
    const { standin, api } = await setup({ generatingPolls: 1000 });
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
    queue.cancel(job.id);
    await queue.idle();
    await expect.poll(() => standin.get(generationId)!.status).toBe('canceled');
    expect(standin.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([
      `/v1/generations/${generationId}`,
    ]);
    expect(queue.get(job.id)).toMatchObject({ state: 'canceled' });
    await queue.dispose();
  });

  it('a variations job goes through /videos/variations and keeps its n items', async () => {
    const { standin, api } = await setup();
    const queue = createJobQueue({ journal: journalAt('variations.db'), api, limits: { video: 1, image: 1 } });
    await queue.start();
    const job = queue.enqueue({
      kind: 'video',
      request: { ...video('the source prompt'), n: 3 },
      variationOf: 'med_src',
    });
    await queue.idle();
    expect(queue.get(job.id)).toMatchObject({ state: 'done', variationOf: 'med_src' });
    expect(queue.get(job.id)!.result!.items).toHaveLength(3);
    expect(standin.posts()[0]).toMatchObject({
      path: '/v1/videos/variations',
      body: { media_id: 'med_src', n: 3, prompt: 'the source prompt' },
    });
    await queue.dispose();
  });
});
