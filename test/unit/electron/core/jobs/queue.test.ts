import { ManualClock } from '../../../../../shared/clock.ts';
import { describe, expect, it } from 'vitest';
import type { GenerationResponse, MediaItem, Usage } from '../../../../../shared/api/index.ts';
import {
  canTransition,
  concurrencyLimits,
  createJobJournal,
  createJobQueue,
  JobConflictError,
  nextWakeAt,
  openJournalDatabase,
  queueStats,
  rateLimitWaitMs,
  selectJobsToStart,
} from '../../../../../electron/core/jobs/index.ts';
import type {
  GenerationService,
  Job,
  JobDownloader,
  JobQueue,
  JobQueueOptions,
  QueueEvent,
  RateWindow,
  StartFrameUploader,
} from '../../../../../electron/core/jobs/index.ts';
import { coreJob } from '../../../../support/core-job.ts';
import { ServiceError } from '../../../../../electron/core/api/index.ts';

const T0 = Date.UTC(2026, 0, 1);

function job(id: string, over: Partial<Job> = {}): Job {
  return coreJob(id, T0, over);
}

describe('job states', () => {
  it('allows only the documented transitions', () => {
    expect(canTransition('queued', 'generating')).toBe(true);
    expect(canTransition('generating', 'queued')).toBe(true); // 429: wait and resume
    expect(canTransition('done', 'queued')).toBe(false);
    expect(canTransition('failed', 'queued')).toBe(true);
    expect(canTransition('downloading', 'generating')).toBe(false);
  });
});

describe('scheduler', () => {
  const limits = { video: 1, image: 2 };
  it('takes limits from usage, then the tier table, else one of each', () => {
    expect(concurrencyLimits({ tier: 'pro', limits: { concurrency: { video: 7, image: 9 } } })).toEqual({
      video: 7,
      image: 9,
    });
    expect(concurrencyLimits({ tier: 'basic' })).toEqual({ video: 2, image: 5 });
    expect(concurrencyLimits({ tier: 'mystery' })).toEqual({ video: 1, image: 1 });
    expect(concurrencyLimits(null)).toEqual({ video: 1, image: 1 });
  });

  it('fills free slots per kind in queue order, skipping jobs told to wait', () => {
    const jobs = [
      job('v-running', { state: 'generating' }),
      job('v1'),
      job('i1', { kind: 'image' }),
      job('i-wait', { kind: 'image', notBefore: T0 + 5000 }),
      job('i2', { kind: 'image' }),
      job('i3', { kind: 'image' }),
    ];
    expect(selectJobsToStart({ now: T0, paused: false, jobs, limits, rateLimit: null }).map((j) => j.id)).toEqual([
      'i1',
      'i2',
    ]);
    expect(selectJobsToStart({ now: T0, paused: true, jobs, limits, rateLimit: null })).toEqual([]);
    expect(nextWakeAt({ now: T0, paused: false, jobs, limits, rateLimit: null })).toBe(T0 + 5000);
  });

  it('sends nothing the rate window says would be refused', () => {
    const jobs = [job('i1', { kind: 'image' }), job('i2', { kind: 'image' })];
    const spent: RateWindow = { remaining: 0, reset: (T0 + 30_000) / 1000 };
    expect(rateLimitWaitMs(spent, T0)).toBe(30_000);
    expect(selectJobsToStart({ now: T0, paused: false, jobs, limits, rateLimit: spent })).toEqual([]);
    expect(
      selectJobsToStart({ now: T0, paused: false, jobs, limits, rateLimit: { remaining: 1, reset: null } }),
    ).toHaveLength(1);
    expect(nextWakeAt({ now: T0, paused: false, jobs, limits, rateLimit: spent })).toBe(T0 + 30_000);
  });

  it('a spent window that has reset, or has no reset, does not hold the queue forever', () => {
    const jobs = [job('i1', { kind: 'image' }), job('i2', { kind: 'image' })];
    // The last response said 0 left until T0 + 30 s; nothing was sent since, so nothing refreshed it.
    const stale: RateWindow = { remaining: 0, reset: (T0 + 30_000) / 1000 };
    expect(selectJobsToStart({ now: T0 + 30_000, paused: false, jobs, limits, rateLimit: stale })).toHaveLength(2);
    expect(
      selectJobsToStart({ now: T0, paused: false, jobs, limits, rateLimit: { remaining: 0, reset: null } }),
    ).toHaveLength(1);
  });

  it('estimates the next free slot from the rate window and running jobs', () => {
    const jobs = [job('v', { state: 'generating' }), job('q')];
    const view = { now: T0 + 1000, paused: false, jobs, limits, rateLimit: null };
    const s = queueStats(view, new Map([['v', T0]]), { video: 10_000, image: null });
    expect(s).toMatchObject({ running: { video: 1, image: 0 }, queued: 1, rateLimitedUntil: null });
    expect(s.nextSlotAt).toEqual({ video: T0 + 10_000, image: T0 + 1000 });
    const limited = queueStats(
      { ...view, rateLimit: { remaining: 0, reset: (T0 + 60_000) / 1000 } },
      new Map([['v', T0]]),
      { video: 10_000, image: null },
    );
    expect(limited.nextSlotAt).toEqual({ video: T0 + 60_000, image: T0 + 60_000 });
    expect(queueStats(view, new Map(), { video: null, image: null }).nextSlotAt.video).toBeNull();
  });
});

/** A scripted service for the queue's control logic; the real engine is in the integration tests. */
class ScriptedService implements GenerationService {
  rateLimit: RateWindow = { remaining: null, reset: null };
  calls: { prompt: string; key: string }[] = [];
  /** The bodies the generation calls were sent with, in order. */
  bodies: Record<string, unknown>[] = [];
  media: MediaItem[] = [];
  pending: { prompt: string; resolve: (r: GenerationResponse) => void; reject: (e: unknown) => void }[] = [];
  respond: (prompt: string) => 'hold' | 'ok' | Error = () => 'ok';

  generateVideo(
    input: { prompt: string; model: string },
    o: { idempotencyKey: string; signal?: AbortSignal },
  ): Promise<GenerationResponse> {
    this.calls.push({ prompt: input.prompt, key: o.idempotencyKey });
    this.bodies.push({ ...input });
    const r = this.respond(input.prompt);
    if (r instanceof Error) return Promise.reject(r);
    if (r === 'ok') return Promise.resolve(response(input.prompt));
    return new Promise((resolve, reject) => {
      this.pending.push({ prompt: input.prompt, resolve, reject });
      o.signal?.addEventListener('abort', () => reject(new ServiceError('canceled', 'cancelled')));
    });
  }
  generateImage(
    input: { prompt: string; model: string },
    o: { idempotencyKey: string; signal?: AbortSignal },
  ): Promise<GenerationResponse> {
    return this.generateVideo(input, o);
  }
  listMedia(): Promise<{ total: number; medias: MediaItem[] }> {
    return Promise.resolve({ total: this.media.length, medias: this.media });
  }
  getUsage(): Promise<Usage> {
    return Promise.reject(new Error('offline'));
  }
  finish(prompt: string): void {
    const i = this.pending.findIndex((p) => p.prompt === prompt);
    const [p] = this.pending.splice(i, 1);
    p!.resolve(response(prompt));
  }
}

function response(prompt: string): GenerationResponse {
  return {
    success: true,
    price: 0.1,
    stats: { setupTime: 0, processingTime: 0, generationTime: 0, retries: 0, providerId: 'p' },
    data: [
      {
        id: `item-${prompt}`,
        url: 'u',
        mime: 'video/mp4',
        user: 'u',
        media: 'video',
        model: 'clipdesk/motion',
        provider: 'p',
        prompt,
        size: '360p',
        duration: 2,
        createdAt: new Date(T0).toISOString(),
      },
    ],
  };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

function makeQueue(service: ScriptedService, over: Partial<JobQueueOptions> = {}) {
  const journal = createJobJournal({ db: openJournalDatabase(':memory:'), now: () => Date.now() });
  const queue = createJobQueue({ journal, api: service, limits: { video: 1, image: 2 }, ...over });
  return { journal, queue };
}
const video = (prompt: string) => ({ kind: 'video' as const, request: { model: 'clipdesk/motion', prompt } });

describe('job queue controls', () => {
  it('a 429 sends the job back to wait, then it resumes and finishes; it never fails on it', async () => {
    const service = new ScriptedService();
    let first = true;
    service.respond = () => {
      if (!first) return 'ok';
      first = false;
      return new ServiceError('rate_limit_exceeded', 'Concurrent video generations are limited', { retryAfter: 0.05 });
    };
    const { queue, journal } = makeQueue(service);
    await queue.start();
    const j = queue.enqueue(video('busy'));
    await queue.idle();
    expect(queue.get(j.id)?.state).toBe('done');
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual([
      'queued',
      'generating',
      'queued',
      'generating',
      'done',
    ]);
    expect(service.calls).toHaveLength(2);
    await queue.dispose();
  });

  it('a 429 that never ends fails the job once its waits reach the job’s retry budget', async () => {
    const service = new ScriptedService();
    service.respond = () => new ServiceError('rate_limit_exceeded', 'Too many', { retryAfter: 0.05 });
    const { queue, journal } = makeQueue(service, { retryWaitMs: 120 });
    await queue.start();
    const j = queue.enqueue(video('always-busy'));
    await queue.idle();
    expect(queue.get(j.id)?.error).toEqual({ code: 'rate_limit_exceeded', message: 'Too many' });
    // Two waits of 50 ms fit in 120; the third 429 ends it.
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual([
      'queued',
      'generating',
      'queued',
      'generating',
      'queued',
      'generating',
      'failed',
    ]);
    expect(service.calls).toHaveLength(3);
    await queue.dispose();
  });

  it('a move announces jobs only once every position is written, so a listener reading the queue sees no ties', async () => {
    const service = new ScriptedService();
    service.respond = () => 'hold';
    const seen: string[][] = [];
    let queue: ReturnType<typeof makeQueue>['queue'] | null = null;
    ({ queue } = makeQueue(service, {
      onEvent: (e) => {
        if (e.type !== 'job' || !queue) return;
        const queued = queue.list().filter((j) => j.state === 'queued');
        seen.push(queued.map((j) => `${j.request.prompt}@${j.position}`));
      },
    }));
    await queue.start();
    queue.pause();
    const [, , c] = ['a', 'b', 'c'].map((p) => queue.enqueue(video(p)));
    await tick();
    seen.length = 0;
    queue.move(c!.id, 0);
    expect(seen.length).toBeGreaterThan(0);
    for (const snapshot of seen) {
      const positions = snapshot.map((x) => x.split('@')[1]);
      expect(new Set(positions).size, snapshot.join(' ')).toBe(positions.length);
    }
    expect(seen.at(-1)!.map((x) => x.split('@')[0])).toEqual(['c', 'a', 'b']);
    await queue.dispose();
  });
  it('pauses, resumes, reorders, cancels, retries and duplicates', async () => {
    const service = new ScriptedService();
    service.respond = () => 'hold';
    const { queue } = makeQueue(service);
    await queue.start();
    queue.pause();
    const [a, b, c] = ['a', 'b', 'c'].map((p) => queue.enqueue(video(p)));
    await tick();
    expect(service.calls).toHaveLength(0);
    queue.move(c!.id, 0);
    expect(
      queue
        .list()
        .filter((j) => j.state === 'queued')
        .map((j) => j.request.prompt),
    ).toEqual(['c', 'a', 'b']);
    queue.resume();
    await tick();
    expect(service.calls.map((x) => x.prompt)).toEqual(['c']);
    expect(queue.stats().running.video).toBe(1);

    queue.cancel(c!.id);
    await tick();
    expect(queue.get(c!.id)?.state).toBe('canceled');
    expect(service.calls.map((x) => x.prompt)).toEqual(['c', 'a']);
    queue.cancel(b!.id);
    service.finish('a');
    await tick();
    expect(queue.get(a!.id)?.state).toBe('done');

    service.respond = () => 'ok';
    const retried = queue.retry(c!.id)!;
    expect(retried.state).toBe('queued');
    const copy = queue.duplicate(a!.id)!;
    await queue.idle();
    expect(queue.get(c!.id)?.state).toBe('done');
    expect(queue.get(copy.id)).toMatchObject({ state: 'done', request: a!.request });
    expect(queue.get(b!.id)?.state).toBe('canceled');
    await queue.dispose();
  });

  it('a batch gets distinct seeds; an invalid request fails and keeps its inputs for a retry', async () => {
    const service = new ScriptedService();
    service.respond = (p) => (p === 'bad' ? new ServiceError('invalid_request_error', 'prompt is required') : 'ok');
    const { queue } = makeQueue(service, { limits: { video: 5, image: 5 } });
    await queue.start();
    const batch = queue.enqueueBatch(video('many'), 4, { seed: 10 });
    expect(batch.map((j) => j.request.seed)).toEqual([10, 11, 12, 13]);
    expect(new Set(batch.map((j) => j.batchId)).size).toBe(1);
    const bad = queue.enqueue(video('bad'));
    await queue.idle();
    expect(queue.get(bad.id)).toMatchObject({
      state: 'failed',
      error: { code: 'invalid_request_error' },
      request: { prompt: 'bad' },
    });
    await queue.dispose();
  });

  it('an interrupted job that cannot be found is failed, never resubmitted', async () => {
    const service = new ScriptedService();
    service.respond = () => 'hold';
    const db = openJournalDatabase(':memory:');
    const journal = createJobJournal({ db, now: () => Date.now() });
    const first = createJobQueue({ journal, api: service, limits: { video: 1, image: 1 } });
    await first.start();
    const j = first.enqueue(video('lost'));
    await tick();
    await first.dispose(); // stays "generating" in the journal, as after a crash
    expect(journal.get(j.id)?.state).toBe('generating');

    const calls = service.calls.length;
    const second = createJobQueue({
      journal,
      api: service,
      limits: { video: 1, image: 1 },
      idempotency: false,
      reconcileWindowMs: 0,
      reconcilePollMs: 1,
    });
    await second.start();
    await second.idle();
    expect(service.calls.length).toBe(calls);
    expect(second.get(j.id)).toMatchObject({ state: 'failed', error: { code: 'interrupted' } });
    await second.dispose();
  });
});

describe('retry waits after an interruption', () => {
  it('the runner’s repeats of a lost answer wait within the job’s retry budget, then look elsewhere', async () => {
    const service = new ScriptedService();
    service.respond = () => 'hold';
    const journal = createJobJournal({ db: openJournalDatabase(':memory:'), now: () => Date.now() });
    const first = createJobQueue({ journal, api: service, limits: { video: 1, image: 1 } });
    await first.start();
    const j = first.enqueue(video('busy-after-restart'));
    await tick();
    await first.dispose(); // stays "generating" with its key, as after a crash
    const calls = service.calls.length;
    service.respond = () => new ServiceError('rate_limit_exceeded', 'Too many', { retryAfter: 0.05 });
    const second = createJobQueue({
      journal,
      api: service,
      limits: { video: 1, image: 1 },
      reconcileWindowMs: 0,
      retryWaitMs: 120,
    });
    await second.start();
    await second.idle();
    // Same key each time; two waits of 50 ms fit in 120, so the third 429 sends it to /media.
    expect(service.calls.slice(calls).map((c) => c.key)).toEqual(Array(3).fill(service.calls[0]!.key));
    expect(second.get(j.id)).toMatchObject({ state: 'failed', error: { code: 'interrupted' } });
    await second.dispose();
  });
});

describe("a job's transfers retry within the job's budget", () => {
  it('the uploader and downloader are given the budget the 429 waits drew from, and their waits show on the job', async () => {
    const service = new ScriptedService();
    let first = true;
    service.respond = () => {
      if (!first) return 'ok';
      first = false;
      return new ServiceError('rate_limit_exceeded', 'Too many', { retryAfter: 0.05 });
    };
    const budgets: Array<{ spentMs: number; totalMs: number } | undefined> = [];
    let shownUploadWait: unknown = null;
    let shown: ReturnType<JobQueue['progress']> | null = null;
    const uploader: StartFrameUploader = {
      upload(_source, opts) {
        budgets.push(
          opts?.retryBudget ? { spentMs: opts.retryBudget.spentMs, totalMs: opts.retryBudget.totalMs } : undefined,
        );
        opts?.onWait?.({ reason: 'retry', ms: 2_000, what: 'the upload of frame.png', message: 'socket hang up' });
        shownUploadWait = queue.progress(j.id).upload?.wait ?? null;
        return Promise.resolve({ url: 'https://files.test/frame.png' });
      },
    };
    const downloader: JobDownloader = {
      download(req) {
        budgets.push(
          req.retryBudget ? { spentMs: req.retryBudget.spentMs, totalMs: req.retryBudget.totalMs } : undefined,
        );
        req.onWait?.({ reason: 'retry', ms: 1_000, what: `the download of ${req.item.id}` });
        shown = queue.progress(j.id);
        return Promise.resolve({ path: `/downloads/${req.item.id}.mp4`, bytes: 1 });
      },
    };
    const { queue } = makeQueue(service, { uploader, downloader, retryWaitMs: 60_000 });
    await queue.start();
    const j = queue.enqueue({ ...video('with a frame'), startFrame: 'frame.png' });
    await queue.idle();
    expect(queue.get(j.id)?.state).toBe('done');
    // One budget per job: the download's is the upload's, after the 429's 50 ms wait came out of it.
    expect(budgets).toEqual([
      { spentMs: 0, totalMs: 60_000 },
      { spentMs: 50, totalMs: 60_000 },
    ]);
    expect(shownUploadWait).toMatchObject({
      reason: 'retry',
      what: 'the upload of frame.png',
      message: 'socket hang up',
    });
    expect(shown!.download?.wait).toMatchObject({
      reason: 'retry',
      what: expect.stringMatching(/^the download of /) as string,
    });
    await queue.dispose();
  });
});

describe('a job with a start and an end frame (local files)', () => {
  /** An uploader that records each path and answers with a URL named after it; `hold` paths never finish. */
  function framesUploader(hold: (path: string) => boolean = () => false) {
    const uploads: string[] = [];
    const uploader: StartFrameUploader = {
      upload(source, opts) {
        uploads.push(source.path);
        if (hold(source.path)) {
          return new Promise((_resolve, reject) =>
            opts?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
          );
        }
        opts?.onProgress?.({ sent: 10, total: 10 });
        return Promise.resolve({ url: `https://files.test/${source.path}` });
      },
    };
    return { uploads, uploader };
  }
  const framed = (prompt: string) => ({ ...video(prompt), startFrame: 'start.png', endFrame: 'end.png' });

  it('uploads both, start first, and the generation is sent with both URLs', async () => {
    const service = new ScriptedService();
    const { uploads, uploader } = framesUploader();
    const { queue, journal } = makeQueue(service, { uploader });
    await queue.start();
    const j = queue.enqueue(framed('two frames'));
    expect(j.endFrame).toBe('end.png');
    await queue.idle();
    expect(uploads).toEqual(['start.png', 'end.png']);
    expect(service.bodies).toEqual([
      expect.objectContaining({
        image_url: 'https://files.test/start.png',
        end_image_url: 'https://files.test/end.png',
      }),
    ]);
    expect(queue.get(j.id)).toMatchObject({ state: 'done', startFrame: 'start.png', endFrame: 'end.png' });
    // The upload bar covers both files: the start frame's 10 bytes, then the end frame's.
    expect(queue.progress(j.id).upload).toEqual({ done: 20, total: 20 });
    // One upload step for both frames: the job goes to generating once, when both are in.
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual(['queued', 'uploading', 'generating', 'done']);
    await queue.dispose();
  });

  it('a start frame already uploaded (its URL in the request) is not uploaded again: only the end frame goes up', async () => {
    const service = new ScriptedService();
    const { uploads, uploader } = framesUploader();
    const { queue } = makeQueue(service, { uploader });
    await queue.start();
    const input = framed('start already up');
    const j = queue.enqueue({ ...input, request: { ...input.request, image_url: 'https://files.test/earlier.png' } });
    await queue.idle();
    expect(uploads).toEqual(['end.png']);
    expect(service.bodies[0]).toMatchObject({
      image_url: 'https://files.test/earlier.png',
      end_image_url: 'https://files.test/end.png',
    });
    expect(queue.get(j.id)?.state).toBe('done');
    await queue.dispose();
  });

  it('writes the start frame’s URL before the end frame goes up: after a restart only the end frame is uploaded', async () => {
    const service = new ScriptedService();
    const db = openJournalDatabase(':memory:');
    const journal = createJobJournal({ db, now: () => Date.now() });
    const first = framesUploader((path) => path === 'end.png');
    const before = createJobQueue({ journal, api: service, limits: { video: 1, image: 1 }, uploader: first.uploader });
    await before.start();
    const j = before.enqueue(framed('crash mid-upload'));
    await tick();
    expect(first.uploads).toEqual(['start.png', 'end.png']);
    await before.dispose(); // the app stops while the end frame goes up
    expect(journal.get(j.id)).toMatchObject({
      state: 'uploading',
      request: { image_url: 'https://files.test/start.png' },
    });

    const second = framesUploader();
    const after = createJobQueue({ journal, api: service, limits: { video: 1, image: 1 }, uploader: second.uploader });
    await after.start();
    await after.idle();
    expect(second.uploads).toEqual(['end.png']);
    expect(after.get(j.id)?.state).toBe('done');
    expect(service.bodies).toEqual([
      expect.objectContaining({
        image_url: 'https://files.test/start.png',
        end_image_url: 'https://files.test/end.png',
      }),
    ]);
    await after.dispose();
  });

  it('a batch, a duplicate and a retry carry the end frame as they carry the start frame', async () => {
    const service = new ScriptedService();
    service.respond = (p) => (p === 'refused' ? new ServiceError('invalid_request_error', 'no') : 'ok');
    const { uploads, uploader } = framesUploader();
    const { queue } = makeQueue(service, { uploader, limits: { video: 5, image: 5 } });
    await queue.start();
    const batch = queue.enqueueBatch(framed('batch'), 2, { seed: 1 });
    expect(batch.map((b) => [b.startFrame, b.endFrame])).toEqual([
      ['start.png', 'end.png'],
      ['start.png', 'end.png'],
    ]);
    const failed = queue.enqueue(framed('refused'));
    await queue.idle();
    expect(queue.get(failed.id)?.state).toBe('failed');
    const copy = queue.duplicate(batch[0]!.id)!;
    expect(copy).toMatchObject({ startFrame: 'start.png', endFrame: 'end.png' });
    uploads.length = 0;
    service.bodies.length = 0;
    queue.retry(failed.id);
    await queue.idle();
    // The duplicate has its source's URLs already; the retried job kept those of its first run.
    expect(uploads).toEqual([]);
    expect(service.bodies.map((b) => [b['image_url'], b['end_image_url']])).toEqual([
      ['https://files.test/start.png', 'https://files.test/end.png'],
      ['https://files.test/start.png', 'https://files.test/end.png'],
    ]);
    await queue.dispose();
  });
});

describe('removing jobs', () => {
  it('removes only finished jobs, for good: a restart does not bring them back', async () => {
    const service = new ScriptedService();
    service.respond = (p) => (p === 'hold' ? 'hold' : 'ok');
    const db = openJournalDatabase(':memory:');
    const journal = createJobJournal({ db, now: () => Date.now() });
    const events: QueueEvent[] = [];
    const queue = createJobQueue({
      journal,
      api: service,
      limits: { video: 1, image: 1 },
      onEvent: (e) => events.push(e),
    });
    await queue.start();
    const done = queue.enqueue(video('finished'));
    await queue.idle();
    const running = queue.enqueue(video('hold'));
    const waiting = queue.enqueue(video('waiting'));
    await tick();
    expect(queue.get(running.id)?.state).toBe('generating');

    expect(() => queue.remove(running.id)).toThrow(JobConflictError);
    expect(() => queue.remove(waiting.id)).toThrow(/queued; cancel it first/);
    expect(queue.remove('no-such-job')).toBeNull();

    expect(queue.remove(done.id)).toBe(true);
    expect(events).toContainEqual({ type: 'removed', id: done.id });
    expect(queue.get(done.id)).toBeNull();
    expect(queue.list().map((j) => j.id)).not.toContain(done.id);

    queue.cancel(waiting.id);
    expect(queue.remove(waiting.id)).toBe(true);
    await queue.dispose();

    const again = createJobQueue({ journal, api: service, limits: { video: 1, image: 1 } });
    expect(again.get(done.id)).toBeNull();
    expect(again.get(waiting.id)).toBeNull();
    expect(again.list().map((j) => j.id)).toEqual([running.id]);
    // The removed job's item stays claimed, so a reconcile never takes it for another job.
    expect(journal.claimedItemIds(running.id).has(`item-finished`)).toBe(true);
    await again.dispose();
  });
});

describe('transfer progress', () => {
  it('hands the uploader and downloader per-job callbacks and throttles the job events they cause', async () => {
    const service = new ScriptedService();
    const clock = new ManualClock(T0);
    const events: QueueEvent[] = [];
    const uploads: string[] = [];
    const uploader: StartFrameUploader = {
      upload(source, opts) {
        uploads.push(source.path);
        opts?.onProgress?.({ sent: 0, total: 0 }); // "checking": size unknown
        for (let sent = 1; sent <= 1000; sent++) opts?.onProgress?.({ sent, total: 1000 });
        return Promise.resolve({ url: `https://files.test/${source.path}` });
      },
    };
    const downloader: JobDownloader = {
      download(req) {
        for (let received = 0; received <= 500; received += 5) {
          clock.advance(1); // 100 reports over 100 ms of the queue's clock: about one event
          req.onProgress?.({ received, total: 500 });
        }
        return Promise.resolve({ path: `/downloads/${req.item.id}.mp4`, bytes: 500 });
      },
    };
    const { queue } = makeQueue(service, { uploader, downloader, clock, onEvent: (e) => events.push(e) });
    await queue.start();
    const j = queue.enqueue({ ...video('with a frame'), startFrame: 'frame.png' });
    const other = queue.enqueue(video('plain'));
    await queue.idle();

    expect(uploads).toEqual(['frame.png']);
    expect(queue.get(j.id)?.state).toBe('done');
    expect(queue.progress(j.id)).toEqual({ upload: { done: 1000, total: 1000 }, download: { done: 500, total: 500 } });
    // Per job: the plain job never uploaded, so its upload stays null.
    expect(queue.progress(other.id)).toEqual({ upload: null, download: { done: 500, total: 500 } });
    const jobEvents = events.filter((e) => e.type === 'job' && e.job.id === j.id);
    // 1,100 progress reports; the transitions (queued, uploading, generating, downloading, done)
    // plus a handful of throttled progress events, never one per report.
    expect(jobEvents.length).toBeLessThan(15);
    await queue.dispose();
  });

  it('a canceled upload that still reports emits nothing more for its job', async () => {
    const service = new ScriptedService();
    let report: ((sent: number) => void) | null = null;
    const uploader: StartFrameUploader = {
      upload(_source, opts) {
        report = (sent) => opts?.onProgress?.({ sent, total: 100 });
        return new Promise((_resolve, reject) =>
          opts?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      },
    };
    const events: QueueEvent[] = [];
    const { queue } = makeQueue(service, { uploader, onEvent: (e) => events.push(e) });
    await queue.start();
    const j = queue.enqueue({ ...video('slow upload'), startFrame: 'big.png' });
    await tick();
    report!(10);
    expect(queue.progress(j.id).upload).toEqual({ done: 10, total: 100 });
    queue.cancel(j.id);
    const seen = events.length;
    report!(50);
    await queue.idle();
    expect(events.slice(seen).filter((e) => e.type === 'job')).toEqual([]);
    expect(queue.get(j.id)?.state).toBe('canceled');
    await queue.dispose();
  });

  it('a retried job starts its progress over', async () => {
    const service = new ScriptedService();
    service.respond = () => new ServiceError('invalid_request_error', 'no');
    const uploader: StartFrameUploader = {
      upload(_source, opts) {
        opts?.onProgress?.({ sent: 10, total: 10 });
        return Promise.resolve({ url: 'https://files.test/f.png' });
      },
    };
    const { queue } = makeQueue(service, { uploader });
    await queue.start();
    const j = queue.enqueue({ ...video('fails'), startFrame: 'f.png' });
    await queue.idle();
    expect(queue.get(j.id)?.state).toBe('failed');
    expect(queue.progress(j.id).upload).toEqual({ done: 10, total: 10 });
    queue.pause();
    queue.retry(j.id);
    expect(queue.progress(j.id)).toEqual({ upload: null, download: null });
    await queue.dispose();
  });
});

describe('holds (budgets, docs/workflows.md)', () => {
  it('a held job does not start nor keep idle() waiting; recheck starts it once the hold lifts', async () => {
    const service = new ScriptedService();
    let capped = true;
    const held = new Set<string>();
    const { queue } = makeQueue(service, {
      holdFor: (j) =>
        capped && j.request.prompt === 'pricey' ? { reason: 'budget', message: 'Over today', until: null } : null,
      onEvent: (e) => {
        if (e.type === 'job' && queue.holdOf(e.job.id)) held.add(e.job.id);
      },
    });
    await queue.start();
    const pricey = queue.enqueue(video('pricey'));
    const cheap = queue.enqueue(video('cheap'));
    await queue.idle();
    // The held job gave its slot to the one behind it, and was announced with its hold.
    expect(queue.get(cheap.id)?.state).toBe('done');
    expect(queue.get(pricey.id)?.state).toBe('queued');
    expect(queue.holdOf(pricey.id)?.message).toBe('Over today');
    expect(held.has(pricey.id)).toBe(true);
    expect(service.calls.map((c) => c.prompt)).toEqual(['cheap']);

    capped = false;
    queue.recheck();
    await tick();
    await queue.idle();
    expect(queue.get(pricey.id)?.state).toBe('done');
    expect(queue.holdOf(pricey.id)).toBeNull();
    await queue.dispose();
  });

  it('a job retried with the result found for it only downloads it: it is never submitted again', async () => {
    const service = new ScriptedService();
    service.respond = () => new ServiceError('invalid_request_error', 'the app gave up');
    const saved: string[] = [];
    const downloader: JobDownloader = {
      download: ({ item }) => {
        saved.push(item.id);
        return Promise.resolve({ path: `/downloads/${item.id}.mp4`, bytes: 1 });
      },
    };
    const { queue, journal } = makeQueue(service, { downloader });
    await queue.start();
    const j = queue.enqueue(video('lost'));
    await queue.idle();
    expect(queue.get(j.id)?.state).toBe('failed');
    const found = response('lost');
    queue.retry(j.id, { items: found.data, price: 0.1, recoveredBy: 'library' });
    await tick();
    await queue.idle();
    expect(queue.get(j.id)).toMatchObject({ state: 'done', result: { price: 0.1, recoveredBy: 'library' } });
    expect(service.calls).toHaveLength(1);
    expect(saved).toEqual(['item-lost']);
    expect(journal.transitions(j.id).at(-3)).toMatchObject({ from: 'failed', to: 'queued', detail: 'recover' });
  });
});

describe('what a job found in /media was charged', () => {
  it('is the sum of its items’ prices, so the finished jobs add up to what the service charged', async () => {
    const service = new ScriptedService();
    service.respond = () => new ServiceError('network_error', 'socket hang up');
    const { queue } = makeQueue(service, { idempotency: false, reconcilePollMs: 5 });
    await queue.start();
    const item = {
      ...response('charged anyway').data[0]!,
      price: 0.046,
      modelSlug: 'clipdesk/motion:1',
      providerName: 'P',
    };
    service.media = [{ ...item, createdAt: new Date(Date.now() + 1000).toISOString() }];
    const j = queue.enqueue(video('charged anyway'));
    await queue.idle();
    expect(queue.get(j.id)).toMatchObject({ state: 'done', result: { price: 0.046, recoveredBy: 'library' } });
    await queue.dispose();
  });
});

describe('cancel while the generation POST is on its way', () => {
  /** A service with DELETE /generations/:id (asynchronous mode), so the queue awaits the POST's answer. */
  class CancelableService extends ScriptedService {
    cancelGeneration(): Promise<never> {
      return Promise.reject(new Error('not used here'));
    }
  }

  it('a result that comes back anyway (a service without async mode) stays on the canceled job: it was charged', async () => {
    const service = new CancelableService();
    service.respond = () => 'hold';
    const { queue, journal } = makeQueue(service);
    await queue.start();
    const j = queue.enqueue(video('finished anyway'));
    while (service.pending.length === 0) await tick();
    queue.cancel(j.id);
    service.finish('finished anyway');
    await queue.idle();
    expect(queue.get(j.id)).toMatchObject({ state: 'canceled', result: { price: 0.1 } });
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual(['queued', 'generating', 'canceled']);
    await queue.dispose();
  });

  it('a service known to answer synchronously is hung up on cancelGraceMs after the cancel', async () => {
    const service = new CancelableService();
    service.respond = (prompt) => (prompt === 'answered at once' ? 'ok' : 'hold');
    const { queue } = makeQueue(service, { cancelGraceMs: 20 });
    await queue.start();
    // Its first answer is a 200 with the result: no asynchronous mode, no 202 to wait for.
    queue.enqueue(video('answered at once'));
    await queue.idle();
    const j = queue.enqueue(video('never answered'));
    while (service.pending.length === 0) await tick();
    queue.cancel(j.id);
    await queue.idle();
    expect(queue.get(j.id)).toMatchObject({ state: 'canceled', result: null });
    await queue.dispose();
  });
});

describe('retry of a job canceled while its POST is answered', () => {
  it('is refused until that run has ended', async () => {
    const service = new (class extends ScriptedService {
      cancelGeneration(): Promise<never> {
        return Promise.reject(new Error('not used here'));
      }
    })();
    service.respond = () => 'hold';
    const { queue } = makeQueue(service);
    await queue.start();
    const j = queue.enqueue(video('stopping'));
    while (service.pending.length === 0) await tick();
    queue.cancel(j.id);
    expect(() => queue.retry(j.id)).toThrow(JobConflictError);
    service.finish('stopping');
    await queue.idle();
    expect(queue.retry(j.id)?.state).toBe('queued');
    await queue.dispose();
  });
});
