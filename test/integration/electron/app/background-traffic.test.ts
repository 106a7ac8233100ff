import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouterClient } from '@orpc/server';
import type { App } from '../../../../electron/app/composition-root.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import { TIERS } from '../../../../shared/api/index.ts';
import type { JobRequestInput } from '../../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';
import { startRequestCounter, type RequestCounter } from '../../../support/request-counter.ts';
import { startTestApp } from '../../../support/test-app.ts';
import { untilTrue } from '../../../support/until.ts';
import { startEngine, type TestEngine } from '../core/jobs/engine.ts';

// What the app itself asks of a free-tier account (10 requests a minute), counted per action on
// the real Local engine: every request passes a recording relay, which notes its route and whether
// the service counted it (its answer's rate-limit headers). The figures are in docs/benchmarks.md
// ("The app's own requests"). Per action, not per wall-clock minute: the app has no timer that
// calls the service while idle, so an idle minute is the sum of the periodic work, run here once.
let engine: TestEngine;
let counter: RequestCounter;
let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;

const VIDEO: JobRequestInput = {
  kind: 'video',
  model: 'clipdesk/motion',
  prompt: 'a paper boat on a pond',
  size: '360p',
  duration: 2,
  routing: 'optimal',
  public: false,
};

beforeAll(async () => {
  engine = await startEngine();
  counter = await startRequestCounter(engine.service.url);
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-traffic-'));
  ({ app, ipc } = startTestApp({
    dataDir: dir,
    secrets: memoryKeychain(),
    downloadDir: path.join(dir, 'downloads'),
    background: true,
  }));
}, 60_000);
afterAll(async () => {
  await app?.dispose();
  await counter?.close();
  await engine?.close();
  await rm(dir, { recursive: true, force: true });
});

const FREE_PER_MINUTE = TIERS.free.rate.minute;

describe("the app's own requests on a free-tier account", () => {
  it(
    'opening the app and Compose, idling, one job, Settings: each costs few counted requests',
    { timeout: 120_000 },
    async () => {
      const { key } = await engine.service.createKey({ user: 'newcomer', tier: 'free' });
      const { id } = await ipc.profiles.create({ name: 'Free', baseUrl: counter.url, key });

      // Launch: the session opens (its catalog and first library sync), Compose loads its lists and
      // previews the preselected model's routing.
      let at = counter.seen.length;
      await ipc.profiles.activate({ id });
      const session = await app.session();
      await Promise.all([ipc.models.list(undefined), ipc.providers.list(undefined)]);
      await ipc.compose.preview(VIDEO);
      await untilTrue('the first library sync', () => session.sync.hasFullSync());
      const launch = counter.byRoute(at);
      const launchCounted = counter.counted(at);

      // Idle: the only periodic work (the retention guard, every 5 minutes) asks nothing of the service.
      at = counter.seen.length;
      await session.guard.tick();
      expect(counter.seen.length - at).toBe(0);

      // One job, from Generate to the file saved: its polls are free, its submit and sync are counted.
      at = counter.seen.length;
      const job = await ipc.jobs.submit(VIDEO);
      await untilTrue('the job done', async () => (await ipc.jobs.get({ id: job.id })).state === 'done', 90_000);
      const oneJob = counter.byRoute(at);
      const jobCounted = counter.counted(at);

      // Settings → Usage: the usage and its reconciliation.
      at = counter.seen.length;
      await ipc.usage.get(undefined);
      await ipc.usage.reconcile(undefined);
      const settings = counter.byRoute(at);
      const settingsCounted = counter.counted(at);

      // Launch: the model list, the provider list, the library's sync, Compose's routing preview,
      // each once; the queue's look at the account's limits (GET /usage) is free.
      expect(launch).toEqual({
        'GET /v1/models': { counted: 1, free: 0 },
        'GET /v1/providers': { counted: 1, free: 0 },
        'GET /v1/media': { counted: 1, free: 0 },
        'POST /v1/routing/preview': { counted: 1, free: 0 },
        'GET /v1/usage': { counted: 0, free: 1 },
      });
      expect(launchCounted).toBe(4);
      // One job: its submit only. Generate reuses Compose's preview, the downloader the provider
      // list; the polls and the download of its file are free.
      expect(oneJob['POST /v1/videos/generations']).toEqual({ counted: 1, free: 0 });
      expect(oneJob['GET /v1/generations/:id']?.counted).toBe(0);
      expect(oneJob['GET /v1/media/:id/content']).toEqual({ counted: 0, free: 1 });
      expect(jobCounted).toBe(1);
      expect(settings).toEqual({ 'GET /v1/usage': { counted: 0, free: 2 } });
      expect(settingsCounted).toBe(0);
      // After a launch, a free-tier minute still has room for jobs at the tier's rate.
      expect(Math.floor((FREE_PER_MINUTE - launchCounted) / jobCounted)).toBeGreaterThanOrEqual(3);
    },
  );
});
