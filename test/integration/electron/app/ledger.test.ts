import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouterClient } from '@orpc/server';
import type { App } from '../../../../electron/app/composition-root.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import type { Job } from '../../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';
import { startTestApp } from '../../../support/test-app.ts';
import { startEngine, type TestEngine } from '../core/jobs/engine.ts';
import { createApiClient, newIdempotencyKey } from '../../../../electron/core/api/index.ts';

// The ledger and its reconciliation in the composition root, on the real Local engine: a job whose
// download fails is charged but not delivered, Settings → Usage lists it, Recover saves its file
// from /media, and the total is the sum of the finished jobs throughout.
const keychain = memoryKeychain();

let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;

function start(): void {
  ({ app, ipc } = startTestApp({ dataDir: dir, secrets: keychain, downloadDir: path.join(dir, 'downloads') }));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-ledger-app-'));
  start();
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** The job once `ok` holds for it (the test's timeout bounds the wait). */
async function jobWhen(id: string, ok: (job: Job) => boolean): Promise<Job> {
  for (;;) {
    const job = await ipc.jobs.get({ id });
    if (ok(job)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
}
const until = (id: string, states: Job['state'][]): Promise<Job> => jobWhen(id, (j) => states.includes(j.state));
const image = (prompt: string) =>
  ipc.jobs.submit({
    kind: 'image',
    model: 'clipdesk/still',
    prompt,
    size: '256x256',
    routing: 'optimal',
    public: false,
  });
const sumOfFinished = (jobs: Job[]) =>
  Math.round(jobs.filter((j) => j.state === 'done').reduce((n, j) => n + (j.result?.price ?? 0), 0) * 1e6) / 1e6;

describe('charged-failure reconciliation on the Local engine', () => {
  it('lists a charged job whose download failed, recovers its file, and the difference goes away', async () => {
    const downloads = app.profiles.settings().downloadDir;
    const a = await image('a lighthouse at dusk');
    // ×2 variations of one prompt: two jobs, each charged once.
    const batch = await ipc.jobs.submitBatch({
      request: {
        kind: 'image',
        model: 'clipdesk/still',
        prompt: 'two lighthouses',
        size: '256x256',
        routing: 'optimal',
        public: false,
      },
      count: 2,
    });
    // A job canceled before it was sent is charged nothing.
    await ipc.jobs.pause();
    const never = await image('a lighthouse never drawn');
    await ipc.jobs.cancel({ id: never.id });
    await ipc.jobs.resume();
    for (const j of [a, ...batch.jobs]) await until(j.id, ['done']);

    // The download folder becomes a file: the next job is charged, then cannot save its image.
    rmSync(downloads, { recursive: true, force: true });
    writeFileSync(downloads, 'not a folder');
    const c = await image('a lighthouse in fog');
    const failed = await until(c.id, ['failed', 'done']);
    expect(failed.state).toBe('failed');
    expect(failed.result?.itemIds).toHaveLength(1);
    expect(failed.result?.price).toBeGreaterThan(0);

    const { jobs } = await ipc.jobs.list(undefined);
    const before = await ipc.usage.reconcile();
    expect(before.perDay).toBe(true);
    expect(before.total).toBe(sumOfFinished(jobs));
    expect(before.jobs).toEqual([
      expect.objectContaining({ jobId: c.id, reason: 'download', price: failed.result!.price, state: 'failed' }),
    ]);
    expect(before.notDelivered).toBe(failed.result!.price);
    // The ledger holds every charge /usage has for the app's key, per day: no unexplained gap.
    expect(before.differences).toEqual([]);
    const usage = await ipc.usage.get();
    expect(usage.usage.usage?.cost?.total).toBeCloseTo(before.total + before.notDelivered, 6);

    rmSync(downloads, { force: true });
    mkdirSync(downloads, { recursive: true });
    const after = await ipc.usage.recover({ jobId: c.id });
    const recovered = await ipc.jobs.get({ id: c.id });
    expect(recovered.state).toBe('done');
    expect(recovered.result?.itemIds).toEqual(failed.result?.itemIds);
    expect(recovered.result?.paths).toHaveLength(1);
    expect(existsSync(recovered.result!.paths[0]!)).toBe(true);
    expect(after.jobs).toEqual([]);
    expect(after.notDelivered).toBe(0);
    // Recovering charged nothing more: the service's total is now exactly the finished jobs.
    const all = (await ipc.jobs.list(undefined)).jobs;
    expect(after.total).toBe(sumOfFinished(all));
    expect((await ipc.usage.get()).usage.usage?.cost?.total).toBeCloseTo(after.total, 6);
    expect(all.filter((j) => j.state === 'done')).toHaveLength(4);
    // The top bar's meter: every charge was made today, so today's and this month's spend are the total.
    const spend = await ipc.usage.spend();
    expect(spend.today).toBeCloseTo(after.total, 6);
    expect(spend.month).toBeCloseTo(after.total, 6);
    expect(spend.day).toBe(new Date().toISOString().slice(0, 10));

    // The ledger is a file of its own: a restart of the app keeps every charge.
    await app.dispose();
    start();
    const again = await ipc.usage.reconcile();
    expect(again).toMatchObject({ total: after.total, notDelivered: 0, jobs: [], differences: [] });
  });
});

// A charged job whose download failed, whose file the creator then saved from the Library: it was
// delivered after all, and Settings no longer names it.
describe('a failed download saved from the Library later', () => {
  it('is delivered, not “charged but not delivered”', { timeout: 120_000 }, async () => {
    const downloads = app.profiles.settings().downloadDir;
    rmSync(downloads, { recursive: true, force: true });
    writeFileSync(downloads, 'not a folder');
    const job = await image('a lighthouse saved by hand');
    const failed = await until(job.id, ['failed', 'done']);
    expect(failed.state).toBe('failed');
    const itemId = failed.result!.itemIds[0]!;
    rmSync(downloads, { force: true });
    mkdirSync(downloads, { recursive: true });
    expect((await ipc.usage.reconcile()).jobs.map((j) => j.jobId)).toContain(job.id);
    // The library lists it after a sync (the app's first sync, or the Library screen's).
    await ipc.library.sync(undefined);
    await ipc.library.download({ ids: [itemId] });
    for (;;) {
      if ((await ipc.library.get({ id: itemId })).localPath) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = await ipc.usage.reconcile();
    expect(after.jobs.map((j) => j.jobId)).not.toContain(job.id);
    expect(after.notDelivered).toBe(0);
  });
});

// When the app's key changes while a job runs (a Local engine without a keychain makes a key per
// run; a profile's key can be replaced), a job that was generating when the app stopped is charged
// by the service to the key that submitted it, and its result arrives under the next key. Here on a
// profile of another real Local engine, which keeps rendering while the app is away.
describe('the ledger across a change of key', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startEngine();
  });
  afterAll(async () => {
    await engine.close();
  });
  const video = (prompt: string, size: string, duration: number) =>
    ipc.jobs.submit({
      kind: 'video',
      model: 'clipdesk/motion',
      prompt,
      size,
      duration,
      routing: 'optimal',
      public: false,
    });

  it(
    'charges a job cut by a restart once, to the key that submitted it, and names no canceled job',
    { timeout: 300_000 },
    async () => {
      const first = await engine.service.createKey({ user: 'creator', tier: 'pro' });
      const second = await engine.service.createKey({ user: 'creator', tier: 'pro' });
      const { id } = await ipc.profiles.create({ name: 'Studio', baseUrl: engine.service.url, key: first.key });
      await ipc.profiles.activate({ id });
      await until((await image('a lighthouse on a cliff')).id, ['done']);
      // Canceled while the service renders it: not charged.
      const canceled = await video('a lighthouse never finished', '1080p', 8);
      await jobWhen(canceled.id, (j) => Boolean(j.generation?.id));
      await ipc.jobs.cancel({ id: canceled.id });
      // Generating when the app stops; the service finishes it, and the next run gets its result.
      const cut = await video('a lighthouse across a restart', '360p', 2);
      await jobWhen(cut.id, (j) => Boolean(j.generation?.id));
      await app.dispose();
      await keychain.set(app.profiles.keyAccount(id), second.key);
      start();
      const finished = await until(cut.id, ['done', 'failed']);
      expect([finished.state, finished.error]).toEqual(['done', null]);

      const { jobs } = await ipc.jobs.list(undefined);
      expect(jobs.find((j) => j.id === canceled.id)).toMatchObject({ state: 'canceled', result: null });
      const r = await ipc.usage.reconcile();
      expect(r).toMatchObject({ perDay: true, notDelivered: 0, jobs: [], differences: [], otherKeys: 0 });
      expect(r.total).toBe(sumOfFinished(jobs));
      // The service charged exactly the finished jobs, the cut one once, to the key that submitted it.
      const usage = (await ipc.usage.get()).usage.usage?.cost;
      expect(usage?.total).toBeCloseTo(r.total, 6);
      expect(usage?.byKey?.find((k) => k.last4 === first.key.slice(-4))?.cost).toBeCloseTo(r.total, 6);
    },
  );
});

// The CLI and the app on one key: the service charges that key for both, and the app's ledger
// holds only its own jobs. What the CLI made is reconciled from the library after a sync, never
// shown as "Charged but not delivered".
describe('the ledger beside another client of the same key', () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startEngine();
  });
  afterAll(async () => {
    await engine.close();
  });

  it('reconciles the other client’s items and blames nothing on the app', { timeout: 120_000 }, async () => {
    const shared = await engine.service.createKey({ user: 'duo', tier: 'pro' });
    const { id } = await ipc.profiles.create({ name: 'Shared key', baseUrl: engine.service.url, key: shared.key });
    await ipc.profiles.activate({ id });
    await until((await image('a harbour at noon')).id, ['done']);
    const cli = createApiClient({ baseUrl: engine.service.url, getKey: () => shared.key });
    const made = [
      await cli.generateImage(
        { model: 'clipdesk/still', prompt: 'the CLI’s harbour', size: '256x256' },
        { idempotencyKey: newIdempotencyKey() },
      ),
      await cli.generateImage(
        { model: 'clipdesk/still', prompt: 'the CLI’s lighthouse', size: '256x256' },
        { idempotencyKey: newIdempotencyKey() },
      ),
    ];
    await cli.dispose();
    const cliCost = made.reduce((n, r) => n + r.price, 0);
    expect(cliCost).toBeGreaterThan(0);

    const r = await ipc.usage.reconcile();
    expect(r).toMatchObject({ perDay: true, notDelivered: 0, jobs: [], otherKeys: 0 });
    expect(r.otherClients).toBeCloseTo(cliCost, 6);
    expect(r.differences.map((d) => d.unexplained)).toEqual([0]);
  });
});
