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
import { until } from '../../../support/until.ts';
import { startEngine, type TestEngine } from '../core/jobs/engine.ts';

// The ledger when the app's key changes while a job runs (a Local engine without a keychain makes
// a key per run; a profile's key can be replaced): a job that was generating when the app stopped
// is charged by the service to the key that submitted it, and its result arrives under the next
// key. The app on a profile of the real Local engine on loopback, which keeps rendering while the
// app is away. Settings → Usage must show nothing charged but not delivered, and never blame a
// canceled job for it.
const keychain = memoryKeychain();

let engine: TestEngine;
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
  engine = await startEngine();
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-ledger-keys-'));
  start();
});
afterAll(async () => {
  await app.dispose();
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

const job = (id: string, what: string, ok: (j: Job) => boolean): Promise<Job> =>
  until(
    what,
    async () => {
      const j = await ipc.jobs.get({ id });
      return ok(j) ? j : undefined;
    },
    240_000,
    100,
  );
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

describe('the ledger across a change of key', () => {
  it(
    'charges a job cut by a restart once, to the key that submitted it, and names no canceled job',
    { timeout: 300_000 },
    async () => {
      const first = await engine.service.createKey({ user: 'creator', tier: 'pro' });
      const second = await engine.service.createKey({ user: 'creator', tier: 'pro' });
      const { id } = await ipc.profiles.create({ name: 'Studio', baseUrl: engine.service.url, key: first.key });
      await ipc.profiles.activate({ id });
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
      // Generating when the app stops; the service finishes it, and the next run gets its result.
      const cut = await video('a lighthouse across a restart', '360p', 2);
      await job(cut.id, 'its generation', (j) => Boolean(j.generation?.id));
      await app.dispose();
      await keychain.set(app.profiles.keyAccount(id), second.key);
      start();
      const finished = await job(cut.id, 'the cut job to finish', (j) => j.state === 'done' || j.state === 'failed');
      expect([finished.state, finished.error]).toEqual(['done', null]);

      const { jobs } = await ipc.jobs.list(undefined);
      expect(jobs.find((j) => j.id === canceled.id)).toMatchObject({ state: 'canceled', result: null });
      const r = await ipc.usage.reconcile();
      const finishedTotal = jobs.filter((j) => j.state === 'done').reduce((n, j) => n + (j.result?.price ?? 0), 0);
      expect(r).toMatchObject({ perDay: true, notDelivered: 0, jobs: [], differences: [], otherKeys: 0 });
      expect(r.total).toBeCloseTo(finishedTotal, 6);
      // The service charged exactly the finished jobs, the cut one once, to the key that submitted it.
      const usage = (await ipc.usage.get()).usage.usage.cost;
      expect(usage.total).toBeCloseTo(r.total, 6);
      expect(usage.byKey.find((k) => k.last4 === first.key.slice(-4))?.cost).toBeCloseTo(r.total, 6);
    },
  );
});
