// docs/workflows.md, "Canceled work": a job canceled in the app stops its render and is not charged. The
// app's job queue against the real Local engine on loopback (real HTTP, SQLite, ffmpeg), canceled
// in every window of its life: before the POST leaves, while the POST is on its way (the 202 not
// back yet), while the service renders, and while the result downloads. What is checked is what a
// person would see: no ffmpeg of that render left in the process table, no charge in GET /usage
// (the app's total), the job `canceled`, the service's generation `canceled` and nothing in /media.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../../../electron/core/api/index.ts';
import { createApiClient } from '../../../../../electron/core/api/index.ts';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';
import { createJobJournal, createJobQueue, openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';
import { BACKGROUND_NICENESS } from '../../../../../shared/node/ffmpeg.ts';
import type { Job, JobDownloader, JobQueue, QueueEvent } from '../../../../../electron/core/jobs/index.ts';
import type { Generation } from '../../../../../shared/api/index.ts';
import { within } from '../../../../support/until.ts';
import { startEngine, tinyVideo } from './engine.ts';
import type { TestEngine } from './engine.ts';

let engine: TestEngine;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  engine = await startEngine();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await engine.close();
});

/** The longest, largest render of a procedural model: minutes of ffmpeg on this machine. */
const longVideo = (prompt: string) => ({ model: 'clipdesk/motion', prompt, size: '1080p', duration: 8 });

/** Live ffmpeg processes whose command line names a path under `dir` (a render's work files). */
function ffmpegUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // Exited while we looked.
    }
    if (/ffmpeg$/.test(argv[0] ?? '') && argv.some((a) => a.includes(dir))) pids.push(Number(entry));
  }
  return pids;
}

/** A process's nice value (field 19 of /proc/PID/stat, counted after the command's closing parenthesis). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/**
 * The nice value of a process's autogroup (Linux's CPU group per session: a detached render has a
 * session of its own), or null where the kernel has no autogroup.
 */
function autogroupNiceOf(pid: number): number | null {
  if (!existsSync('/proc/self/autogroup')) return null;
  return Number(/nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'))?.[1]);
}

const serviceDir = () => join(engine.dir, 'service');

interface Setup {
  user: string;
  api: ApiClient;
  queue: JobQueue;
  events: QueueEvent[];
}

async function setup(
  user: string,
  opts: {
    baseUrl?: string;
    downloader?: (api: ApiClient) => JobDownloader;
    cancelGraceMs?: number;
    onEvent?: (event: QueueEvent, queue: JobQueue) => void;
  } = {},
): Promise<Setup> {
  const { key } = await engine.service.createKey({ user, tier: 'pro' });
  const api = createApiClient({
    baseUrl: opts.baseUrl ?? engine.service.url,
    getKey: () => key,
    poll: { initialMs: 20, maxMs: 50 },
  });
  const events: QueueEvent[] = [];
  const queue = createJobQueue({
    journal: createJobJournal({ db: openJournalDatabase(join(engine.dir, `${user}.db`)), now: () => Date.now() }),
    api,
    ...(opts.downloader ? { downloader: opts.downloader(api) } : {}),
    ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
    onEvent: (e) => {
      events.push(e);
      opts.onEvent?.(e, queue);
    },
  });
  cleanups.push(async () => {
    await queue.dispose();
    await api.dispose();
  });
  await queue.start();
  return { user, api, queue, events };
}

/** The service's records of the account's generations, newest first. */
async function generations(api: ApiClient): Promise<Generation[]> {
  return (await api.listGenerations({ limit: 100 })).generations;
}

/** Nothing of the job is left running or charged, and the app says canceled. */
async function expectCanceledAndFree(s: Setup, job: Job): Promise<void> {
  expect(s.queue.get(job.id)).toMatchObject({ state: 'canceled', result: null });
  await s.queue.idle();
  // Every generation the service made for it ends canceled (and there may be none).
  await expect
    .poll(async () => (await generations(s.api)).map((g) => g.status).filter((st) => st !== 'canceled'), {
      timeout: 10_000,
    })
    .toEqual([]);
  await expect.poll(() => ffmpegUnder(serviceDir()), { timeout: 10_000 }).toEqual([]);
  const usage = await s.api.getUsage();
  expect(usage.usage?.cost?.total).toBe(0);
  expect((await s.api.listMedia({ user: 'me' })).total).toBe(0);
  expect(s.queue.get(job.id)?.state).toBe('canceled');
}

/** Resolves once an ffmpeg is rendering under the service's data folder. */
async function rendering(): Promise<void> {
  await expect.poll(() => ffmpegUnder(serviceDir()).length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
}

/**
 * A loopback hop between the app and the service that forwards every request at once but holds
 * back the answer to a generation POST until released: the service has the generation and is
 * rendering while the app still waits for its 202.
 */
async function holdingHop(target: string) {
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));
  let held: () => void = () => undefined;
  const holding = new Promise<void>((r) => (held = r));
  let hungUp: () => void = () => undefined;
  /** Resolves when the app drops the held request (the connection closes unanswered). */
  const dropped = new Promise<void>((r) => (hungUp = r));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'idempotency-key', 'prefer']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const isPost = req.method === 'POST' && /generations$/.test(req.url ?? '');
      if (isPost) res.once('close', () => !res.writableFinished && hungUp());
      fetch(`${target}${req.url}`, { method: req.method, headers, body })
        .then(async (r) => {
          const bytes = Buffer.from(await r.arrayBuffer());
          if (isPost) {
            held();
            await released;
          }
          if (res.destroyed) return;
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(bytes);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => {
    release();
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url, holding, dropped, release };
}

describe('cancel a job in the app: the render stops and nothing is charged', () => {
  it('before the POST is sent (queued, then the instant it turns generating)', async () => {
    const s = await setup('cancel-before', {
      // Canceled in the same turn as the job turns generating, before its POST leaves.
      onEvent: (e, queue) => {
        if (e.type === 'job' && e.job.state === 'generating') queue.cancel(e.job.id);
      },
    });
    s.queue.pause();
    const queued = s.queue.enqueue({ kind: 'video', request: longVideo('never sent') });
    s.queue.cancel(queued.id);
    const job = s.queue.enqueue({ kind: 'video', request: longVideo('canceled on the way out') });
    s.queue.resume();
    await s.queue.idle();
    expect(s.queue.get(queued.id)?.state).toBe('canceled');
    await expectCanceledAndFree(s, job);
    expect(await generations(s.api)).toEqual([]);
  });

  it('while the POST is in flight (the service renders, the 202 is not back yet): the 202 is canceled with DELETE', async () => {
    const hop = await holdingHop(engine.service.url);
    const s = await setup('cancel-in-flight', { baseUrl: hop.url });
    const job = s.queue.enqueue({ kind: 'video', request: longVideo('in flight') });
    await hop.holding;
    await rendering();
    s.queue.cancel(job.id);
    expect(s.queue.get(job.id)?.state).toBe('canceled');
    hop.release();
    await expectCanceledAndFree(s, job);
    expect((await generations(s.api)).map((g) => g.status)).toEqual(['canceled']);
  });

  it('while the POST is in flight and its answer comes late: the app waits for it, then cancels the generation', async () => {
    const hop = await holdingHop(engine.service.url);
    const s = await setup('cancel-late-answer', { baseUrl: hop.url, cancelGraceMs: 100 });
    const job = s.queue.enqueue({ kind: 'video', request: longVideo('late answer') });
    await hop.holding;
    await rendering();
    s.queue.cancel(job.id);
    // The app does not hang up on an answer it has not had: that generation would run on, charged
    // and unseen (its id has not arrived). cancelGraceMs is only for a service that answers
    // synchronously, which this one has not done.
    expect(await within(1_000, hop.dropped)).toBe('still waiting');
    hop.release();
    await expectCanceledAndFree(s, job);
    expect((await generations(s.api)).map((g) => g.status)).toEqual(['canceled']);
  });

  it('during the render: DELETE /generations/:id reaches the service, ffmpeg is killed', async () => {
    const s = await setup('cancel-render');
    const job = s.queue.enqueue({ kind: 'video', request: longVideo('rendering') });
    await expect.poll(() => s.queue.get(job.id)?.generationId ?? null, { timeout: 10_000 }).not.toBeNull();
    await rendering();
    // The render runs below the app's priority, so main stays responsive while it renders (P12).
    expect(ffmpegUnder(serviceDir()).map(niceOf)).toContain(BACKGROUND_NICENESS);
    // …and so does its session's CPU group, without which its nice value counts for nothing against main.
    const groups = ffmpegUnder(serviceDir()).map(autogroupNiceOf);
    if (groups.some((g) => g !== null)) expect(groups).toContain(BACKGROUND_NICENESS);
    s.queue.cancel(job.id);
    await expectCanceledAndFree(s, job);
    expect((await generations(s.api)).map((g) => g.status)).toEqual(['canceled']);
  });

  it('during the download: the render was over and charged; the download stops and the job keeps its result', async () => {
    const canceler: { queue?: JobQueue } = {};
    const s = await setup('cancel-download', {
      downloader: (api) => {
        const real = createDownloadManager({ api, dir: join(engine.dir, 'downloads-cancel') });
        cleanups.push(() => real.dispose());
        return {
          download: (request) =>
            real.download({
              ...request,
              // The first bytes have arrived: the person cancels.
              onProgress: (p) => {
                request.onProgress?.(p);
                canceler.queue?.cancel(String(request.context?.['jobId']));
              },
            }),
        };
      },
    });
    canceler.queue = s.queue;
    const job = s.queue.enqueue({ kind: 'video', request: tinyVideo('downloading') });
    await s.queue.idle();
    const after = s.queue.get(job.id)!;
    expect(after.state).toBe('canceled');
    expect(after.downloads).toEqual([]);
    // The generation succeeded before the cancel: the app's record of what it cost equals the charge.
    expect(after.result?.price).toBeGreaterThan(0);
    const usage = await s.api.getUsage();
    expect(usage.usage?.cost?.total).toBeCloseTo(after.result!.price!, 6);
    expect(ffmpegUnder(serviceDir())).toEqual([]);
  });
});

describe('a synchronous request whose client hangs up', () => {
  it('stops its render and charges nothing', async () => {
    const user = 'sync-hangup';
    const { key } = await engine.service.createKey({ user, tier: 'pro' });
    const api = createApiClient({ baseUrl: engine.service.url, getKey: () => key });
    cleanups.push(() => api.dispose());
    const hangUp = new AbortController();
    const request = fetch(`${engine.service.url}/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(longVideo('sync, then gone')),
      signal: hangUp.signal,
    }).catch((e: unknown) => e);
    await rendering();
    hangUp.abort();
    await request;
    await expect.poll(() => ffmpegUnder(serviceDir()), { timeout: 10_000 }).toEqual([]);
    await expect.poll(async () => (await api.getUsage()).usage?.running?.video, { timeout: 10_000 }).toBe(0);
    expect((await api.getUsage()).usage?.cost?.total).toBe(0);
    expect((await api.listMedia({ user: 'me' })).total).toBe(0);
  });
});
