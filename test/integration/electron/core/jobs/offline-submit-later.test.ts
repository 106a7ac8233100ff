import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, withOfflineCatalog } from '../../../../../electron/core/api/index.ts';
import type { ApiClient } from '../../../../../electron/core/api/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';
import type { GenerationService, JobQueue } from '../../../../../electron/core/jobs/index.ts';
import { createUploader } from '../../../../../electron/core/uploads/index.ts';
import { makePng } from '../../../server/helpers.ts';
import { exited, serveProcess } from '../../../../support/service-process.ts';
import type { ServedProcess } from '../../../../support/service-process.ts';
import { tinyImage, tinyVideo } from './engine.ts';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../../../../../bin/clipdesk-service.js');
const dir = mkdtempSync(join(tmpdir(), 'clipdesk-offline-'));
const serviceDir = join(dir, 'service');
const journalPath = join(dir, 'jobs.db');
const cleanup: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

/** A port nothing listens on now, for the service to come back on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function stop(served: ServedProcess): Promise<void> {
  served.child.kill('SIGTERM');
  await exited(served.child);
}

/** The generation calls as the queue makes them, each body recorded as it was sent. */
function recording(api: ApiClient, sent: Record<string, unknown>[]): GenerationService {
  return {
    get rateLimit() {
      return api.rateLimit;
    },
    generateVideo: (input, options) => {
      sent.push({ ...input });
      return api.generateVideo(input, options);
    },
    generateImage: (input, options) => api.generateImage(input, options),
    waitForGeneration: (id, options) => api.waitForGeneration(id, options),
    cancelGeneration: (id, options) => api.cancelGeneration(id, options),
    listMedia: (query, options) => api.listMedia(query, options),
    getUsage: (options) => api.getUsage(options),
  };
}

/**
 * The app's core as one launch has it: a client for the profile's base URL and the queue on the
 * journal. `frames`: the queue uploads local frames (the app's uploader) and records what it sends.
 */
async function launch(
  baseUrl: string,
  key: string,
  frames?: { journal: string; sent: Record<string, unknown>[] },
): Promise<{ api: ApiClient; queue: JobQueue; close(): Promise<void> }> {
  const api = withOfflineCatalog(
    createApiClient({ baseUrl, getKey: () => key, retry: { maxRetries: 1, baseDelayMs: 10 } }),
    join(dir, 'catalog.json'),
  );
  const db = openJournalDatabase(frames?.journal ?? journalPath);
  const queue = createJobQueue({
    journal: createJobJournal({ db, now: () => Date.now() }),
    api: frames ? recording(api, frames.sent) : api,
    ...(frames ? { uploader: createUploader({ api }) } : {}),
    offlineProbeMs: 50,
    offlineProbeMaxMs: 200,
  });
  await queue.start();
  return {
    api,
    queue,
    async close() {
      await queue.dispose();
      await api.dispose();
      db.close();
    },
  };
}

const until = async (what: string, check: () => boolean, ms = 60_000): Promise<void> => {
  for (let waited = 0; !check(); waited += 25) {
    if (waited > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

// One standalone service for the file, stopped and served again on the same address by each case.
let args: string[];
let served: ServedProcess;
let key: string;
beforeAll(async () => {
  args = ['--port', String(await freePort()), '--data', serviceDir];
  served = await serveProcess(serviceDir, { args });
  cleanup.push(() => stop(served));
  const { stdout } = await run(process.execPath, [
    CLI,
    'keys',
    'create',
    '--user',
    'offline',
    '--tier',
    'basic',
    '--data',
    serviceDir,
    '--json',
  ]);
  ({ key } = JSON.parse(stdout) as { key: string });
}, 60_000);

describe('compose offline, submit later, across a restart (a standalone service)', () => {
  it('jobs composed while the service is stopped wait, survive the restart, and run once each, charged once', async () => {
    // The app is up and has met the service; then the service goes away.
    let app = await launch(served.url, key);
    expect(app.queue.stats().limits).toEqual({ video: 2, image: 5 });
    const models = await app.api.listModels({ limit: 100, page: 0 });
    expect(models.models.length).toBeGreaterThan(0);
    await stop(served);

    // Compose saves jobs anyway; the first submit meets a refused connection and waits, key kept.
    const jobs = [
      app.queue.enqueue({ kind: 'video', request: tinyVideo('offline clip one') }),
      app.queue.enqueue({ kind: 'video', request: tinyVideo('offline clip two') }),
      app.queue.enqueue({ kind: 'image', request: tinyImage('offline still') }),
    ];
    await until('the queue to notice', () => app.queue.offline() !== null);
    await until('every job back in the queue', () => jobs.every((j) => app.queue.get(j.id)?.state === 'queued'));
    for (const j of jobs) {
      expect(app.queue.progress(j.id).hold).toMatchObject({ reason: 'offline', message: 'Waiting for the service' });
      expect(app.queue.get(j.id)?.error).toBeNull();
    }
    const keys = new Map(jobs.map((j) => [j.id, app.queue.get(j.id)!.idempotencyKey]));
    expect([...keys.values()].some((k) => k !== null)).toBe(true);

    // The app restarts while the service is still down: nothing is lost, everything still waits.
    await app.close();
    app = await launch(served.url, key);
    expect(app.queue.offline()).not.toBeNull();
    // Compose still has the catalog to pick a model from: the lists the service last gave.
    expect(await app.api.listModels({ limit: 100, page: 0 })).toEqual(models);
    await expect(app.api.listModels({ limit: 5, page: 3 })).rejects.toMatchObject({ code: 'network_error' });
    expect(
      app.queue
        .list()
        .map((j) => j.id)
        .sort(),
    ).toEqual(jobs.map((j) => j.id).sort());
    for (const j of jobs) {
      expect(app.queue.get(j.id)?.state).toBe('queued');
      expect(app.queue.get(j.id)?.idempotencyKey).toBe(keys.get(j.id));
      expect(app.queue.progress(j.id).hold?.reason).toBe('offline');
    }
    cleanup.push(() => app.close());

    // The service comes back on the same address: the probe finds it and the jobs run.
    served = await serveProcess(serviceDir, { args });
    await until('every job done', () => jobs.every((j) => app.queue.get(j.id)?.state === 'done'));
    expect(app.queue.offline()).toBeNull();

    // Once each: three items on the service, and the account charged exactly what the jobs were.
    const media = await app.api.listMedia({ user: 'me', limit: 100 });
    expect(media.total).toBe(3);
    const results = jobs.map((j) => app.queue.get(j.id)!.result!);
    expect(new Set(results.flatMap((r) => r.items.map((i) => i.id))).size).toBe(3);
    const usage = await app.api.getUsage();
    const charged = results.reduce((sum, r) => sum + (r.price ?? 0), 0);
    expect(results.every((r) => (r.price ?? 0) > 0)).toBe(true);
    expect(usage.usage?.cost?.total).toBeCloseTo(charged, 6);
    // A job that had met the refused connection was sent again with the key it had then.
    for (const j of jobs) {
      const before = keys.get(j.id);
      if (before) expect(app.queue.get(j.id)?.attempts).toBe(2);
    }
  }, 120_000);

  it('a job with local start and end frames waits for the service, then uploads both and sends their URLs', async () => {
    const [start, end] = await Promise.all([
      makePng(dir, 'start.png', '64x48', 'orange'),
      makePng(dir, 'end.png', '64x48', 'navy'),
    ]);
    const sent: Record<string, unknown>[] = [];
    // A journal of its own: the first case's app still runs on the other one.
    const app = await launch(served.url, key, { journal: join(dir, 'frames.db'), sent });
    cleanup.push(() => app.close());
    await stop(served);

    // Submitted while the service is stopped: queued, not refused; nothing is uploaded yet.
    const j = app.queue.enqueue({
      kind: 'video',
      request: tinyVideo('offline framed clip'),
      startFrame: start,
      endFrame: end,
    });
    await until('the job to wait for the service', () => {
      return app.queue.offline() !== null && app.queue.get(j.id)?.state === 'queued';
    });
    expect(app.queue.progress(j.id).hold).toMatchObject({ reason: 'offline', message: 'Waiting for the service' });
    expect(app.queue.get(j.id)).toMatchObject({ error: null, startFrame: start, endFrame: end });
    expect(app.queue.get(j.id)?.request).not.toHaveProperty('end_image_url');

    // The service comes back: the queue uploads both frames, then generates with their URLs.
    served = await serveProcess(serviceDir, { args });
    await until('the framed job done', () => app.queue.get(j.id)?.state === 'done');
    expect(sent).toHaveLength(1);
    const imageUrl = sent[0]!['image_url'];
    const endImageUrl = sent[0]!['end_image_url'];
    expect(typeof imageUrl === 'string' && imageUrl.startsWith(served.url)).toBe(true);
    expect(typeof endImageUrl === 'string' && endImageUrl.startsWith(served.url)).toBe(true);
    expect(endImageUrl).not.toBe(imageUrl);
    expect(app.queue.get(j.id)?.request).toMatchObject({ image_url: imageUrl, end_image_url: endImageUrl });
    // The service's own upload: the end frame's bytes, on the service, under that URL.
    const res = await fetch(String(endImageUrl), { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/png/);
  }, 120_000);
});
