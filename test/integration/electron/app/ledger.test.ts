import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/compose.ts';
import { browserPlatform } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import type { Job } from '../../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';

// The ledger and its reconciliation in the composition root, on the real Local engine: a job whose
// download fails is charged but not delivered, Settings → Usage lists it, Recover saves its file
// from /media, and the total is the sum of the finished jobs throughout.
const keychain = memoryKeychain();

let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;

function start(): void {
  app = createApp({
    dataDir: dir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: keychain,
    background: false,
    downloadDirOverride: path.join(dir, 'downloads'),
  });
  ipc = createRouterClient(app.router, { context: { transport: 'http' } });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-ledger-app-'));
  start();
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

async function until(id: string, states: Job['state'][]): Promise<Job> {
  for (;;) {
    const job = await ipc.jobs.get({ id });
    if (states.includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
}
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

    // The ledger is a file of its own: a restart of the app keeps every charge.
    await app.dispose();
    start();
    const again = await ipc.usage.reconcile();
    expect(again).toMatchObject({ total: after.total, notDelivered: 0, jobs: [], differences: [] });
  });
});
