import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/compose.ts';
import { browserPlatform } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import type { SecretStore } from '../../../../electron/core/secrets/index.ts';
import type { Job } from '../../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';
import { until } from '../../../support/until.ts';

// The ledger when the app's key changes while a job runs, on the real Local engine: without a
// keychain the engine makes a key for each run, so a job that was generating when the app stopped
// is charged to the first run's key and its result arrives in the second run. Settings → Usage
// must show nothing charged but not delivered, and never blame a canceled job for it.
const noKeychain: SecretStore = {
  ...memoryKeychain(),
  status: () => Promise.resolve({ backend: 'secret-service', available: false, message: 'no keychain here' }),
};

let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;

function start(): void {
  app = createApp({
    dataDir: dir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: noKeychain,
    background: false,
    downloadDirOverride: path.join(dir, 'downloads'),
  });
  ipc = createRouterClient(app.router, { context: { transport: 'http' } });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-ledger-keys-'));
  start();
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

const job = (id: string, what: string, ok: (j: Job) => boolean): Promise<Job> =>
  until(what, async () => {
    const j = await ipc.jobs.get({ id });
    return ok(j) ? j : undefined;
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

describe('the ledger across a new key per run', () => {
  it('charges a job cut by a restart once, to the key that submitted it, and names no canceled job', async () => {
    const firstKey = (await app.session()).keyLast4();
    const done = await ipc.jobs.submit({
      kind: 'image',
      model: 'clipdesk/still',
      prompt: 'a lighthouse at dusk',
      size: '256x256',
      routing: 'optimal',
      public: false,
    });
    await job(done.id, 'the image', (j) => j.state === 'done');
    // Canceled while the service renders it: not charged.
    const canceled = await video('a lighthouse never finished', '1080p', 8);
    await job(canceled.id, 'its generation', (j) => Boolean(j.generation?.id));
    await ipc.jobs.cancel({ id: canceled.id });
    // Generating when the app stops; its result comes to the next run.
    const cut = await video('a lighthouse across a restart', '360p', 2);
    await job(cut.id, 'its generation', (j) => Boolean(j.generation?.id));
    await app.dispose();
    start();
    expect((await app.session()).keyLast4()).not.toEqual(await firstKey);
    const finished = await job(cut.id, 'the cut job to finish', (j) => j.state === 'done' || j.state === 'failed');
    expect(finished.state).toBe('done');
    expect(finished.result?.price).toBeGreaterThan(0);

    const { jobs } = await ipc.jobs.list(undefined);
    expect(jobs.find((j) => j.id === canceled.id)).toMatchObject({ state: 'canceled', result: null });
    const r = await ipc.usage.reconcile();
    const finishedTotal = jobs.filter((j) => j.state === 'done').reduce((n, j) => n + (j.result?.price ?? 0), 0);
    expect(r).toMatchObject({ perDay: true, notDelivered: 0, jobs: [], differences: [], otherKeys: 0 });
    expect(r.total).toBeCloseTo(finishedTotal, 6);
    // The service charged exactly the finished jobs, the cut one once.
    expect((await ipc.usage.get()).usage.usage.cost.total).toBeCloseTo(r.total, 6);
  });
});
