import { describe, expect, it } from 'vitest';
import type { GenerationResponse, MediaItem, Usage } from '../../../../../shared/api/index.ts';
import {
  createJobJournal,
  createJobQueue,
  isUnreachable,
  nextWakeAt,
  openJournalDatabase,
  probeDelayMs,
  queueStats,
  scheduledHold,
  selectJobsToStart,
  slotHold,
  startHold,
} from '../../../../../electron/core/jobs/index.ts';
import type {
  GenerationService,
  Job,
  JobQueueOptions,
  QueueEvent,
  RateWindow,
} from '../../../../../electron/core/jobs/index.ts';
import { toQueueStats } from '../../../../../electron/app/mappers.ts';
import { coreJob } from '../../../../support/core-job.ts';
import { ServiceError } from '../../../../../electron/core/api/index.ts';

const T0 = Date.UTC(2026, 0, 1);

function job(id: string, over: Partial<Job> = {}): Job {
  return coreJob(id, T0, over);
}

/** What undici throws when nothing listens on the port, wrapped as the api client wraps it. */
const refused = () =>
  new ServiceError('network_error', 'Could not reach the service', {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
  });

describe("the scheduler's slot estimate, per kind", () => {
  const limits = { video: 5, image: 2 };
  const fiveVideos = Array.from({ length: 5 }, (_, i) => job(`v${i}`, { state: 'generating' }));
  const startedAt = new Map(fiveVideos.map((j, i) => [j.id, T0 + i * 1000]));

  it('every video slot busy and an image slot free: the video estimate is the oldest run ending, not "free"', () => {
    const view = { now: T0 + 10_000, paused: false, jobs: [...fiveVideos, job('q')], limits, rateLimit: null };
    const s = queueStats(view, startedAt, { video: 52_000, image: null });
    // v0 started at T0 and runs take 52 s on average.
    expect(s.nextSlotAt).toEqual({ video: T0 + 52_000, image: T0 + 10_000 });
    expect(s.nextKind).toBe('video');
    const wire = toQueueStats(s, T0 + 10_000);
    expect(wire.nextSlotInMs).toBe(42_000);
    expect(wire.nextSlotKind).toBe('video');
    expect(wire.nextSlotInMsByKind).toEqual({ video: 42_000, image: 0 });
  });

  it('describes the kind of the first queued job; with nothing queued, a kind whose slots are all busy', () => {
    const view = {
      now: T0 + 10_000,
      paused: false,
      jobs: [...fiveVideos, job('i', { kind: 'image' })],
      limits,
      rateLimit: null,
    };
    const s = queueStats(view, startedAt, { video: 52_000, image: null });
    expect(s.nextKind).toBe('image');
    expect(toQueueStats(s, T0 + 10_000).nextSlotInMs).toBe(0);
    const idle = queueStats({ ...view, jobs: fiveVideos }, startedAt, { video: 52_000, image: null });
    expect(idle.nextKind).toBe('video');
    expect(toQueueStats(idle, T0 + 10_000).nextSlotInMs).toBe(42_000);
    const free = queueStats({ ...view, jobs: [] }, new Map(), { video: null, image: null });
    expect(free.nextKind).toBeNull();
    expect(toQueueStats(free, T0 + 10_000).nextSlotInMs).toBe(0);
  });

  it('a scheduled job does not decide the kind; an unknown average leaves the estimate unknown, not free', () => {
    const jobs = [...fiveVideos, job('later', { kind: 'image', submitAt: T0 + 3_600_000 }), job('q')];
    const s = queueStats({ now: T0, paused: false, jobs, limits, rateLimit: null }, startedAt, {
      video: null,
      image: null,
    });
    expect(s.nextKind).toBe('video');
    expect(toQueueStats(s, T0).nextSlotInMs).toBeNull();
  });

  it('a spent rate window pushes every kind back to its reset', () => {
    const spent: RateWindow = { remaining: 0, reset: (T0 + 90_000) / 1000 };
    const view = { now: T0 + 10_000, paused: false, jobs: [...fiveVideos, job('q')], limits, rateLimit: spent };
    const s = queueStats(view, startedAt, { video: 52_000, image: null });
    expect(s.nextSlotAt).toEqual({ video: T0 + 90_000, image: T0 + 90_000 });
  });
});

describe('holds', () => {
  it('scheduled: until the chosen time, then nothing', () => {
    expect(scheduledHold(job('a', { submitAt: T0 + 60_000 }), T0)).toEqual({
      reason: 'scheduled',
      message: 'Scheduled',
      until: T0 + 60_000,
    });
    expect(scheduledHold(job('a', { submitAt: T0 + 60_000 }), T0 + 60_000)).toBeNull();
    expect(scheduledHold(job('a', { submitAt: T0 + 60_000, state: 'generating' }), T0)).toBeNull();
    expect(scheduledHold(job('a'), T0)).toBeNull();
  });

  it('offline: every queued job waits for the service until the next probe; schedule comes first', () => {
    const offline = { since: T0, failures: 2, nextProbeAt: T0 + 8000 };
    expect(startHold(job('a'), { now: T0, offline })).toEqual({
      reason: 'offline',
      message: 'Waiting for the service',
      until: T0 + 8000,
    });
    expect(startHold(job('a', { submitAt: T0 + 1000 }), { now: T0, offline })?.reason).toBe('scheduled');
    expect(startHold(job('a'), { now: T0, offline: null })).toBeNull();
  });

  it('slot: only when every slot of its own kind is busy', () => {
    const slots = {
      running: { video: 5, image: 0 },
      limits: { video: 5, image: 2 },
      nextSlotAt: { video: T0 + 42_000, image: T0 },
    };
    expect(slotHold(job('v'), slots)).toEqual({
      reason: 'slot',
      message: 'Waiting for a video slot',
      until: T0 + 42_000,
    });
    expect(slotHold(job('i', { kind: 'image' }), slots)).toBeNull();
  });

  it('the scheduler starts no held job and wakes for the scheduled time', () => {
    const jobs = [job('later', { submitAt: T0 + 5000 }), job('now', { kind: 'image' })];
    const view = { now: T0, paused: false, jobs, limits: { video: 1, image: 1 }, rateLimit: null };
    expect(selectJobsToStart(view).map((j) => j.id)).toEqual(['now']);
    expect(nextWakeAt(view)).toBe(T0 + 5000);
    expect(selectJobsToStart({ ...view, now: T0 + 5000 }).map((j) => j.id)).toEqual(['later', 'now']);
    expect(selectJobsToStart({ ...view, offline: { since: T0, failures: 0, nextProbeAt: T0 + 2000 } })).toEqual([]);
  });

  it('tells an unreachable service from other network failures', () => {
    expect(isUnreachable(refused())).toBe(true);
    const aggregate = Object.assign(new AggregateError([refused().cause, refused().cause]), { code: undefined });
    expect(isUnreachable(Object.assign(new Error('x'), { cause: aggregate }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isUnreachable(new Error('offline'))).toBe(false);
    expect([0, 1, 2, 3, 10].map((n) => probeDelayMs(n, 2000, 60_000))).toEqual([2000, 4000, 8000, 16_000, 60_000]);
  });
});

/** A service that is down until `up` is set; it keeps the keys it was sent. */
class FlakyService implements GenerationService {
  rateLimit: RateWindow = { remaining: null, reset: null };
  up = false;
  probes = 0;
  calls: { prompt: string; key: string }[] = [];
  pending: { prompt: string; resolve: (r: GenerationResponse) => void }[] = [];
  hold = false;
  generateVideo(input: { prompt: string }, o: { idempotencyKey: string }): Promise<GenerationResponse> {
    if (!this.up) return Promise.reject(refused());
    this.calls.push({ prompt: input.prompt, key: o.idempotencyKey });
    if (this.hold) return new Promise((resolve) => this.pending.push({ prompt: input.prompt, resolve }));
    return Promise.resolve(response(input.prompt));
  }
  generateImage(input: { prompt: string }, o: { idempotencyKey: string }): Promise<GenerationResponse> {
    return this.generateVideo(input, o);
  }
  listMedia(): Promise<{ total: number; medias: MediaItem[] }> {
    return Promise.resolve({ total: 0, medias: [] });
  }
  getUsage(): Promise<Usage> {
    this.probes++;
    if (!this.up) return Promise.reject(refused());
    return Promise.resolve({
      tier: 'basic',
      limits: { concurrency: { video: 2, image: 5 } },
    } as unknown as Usage);
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

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};
const video = (prompt: string) => ({ kind: 'video' as const, request: { model: 'clipdesk/motion', prompt } });

function makeQueue(api: GenerationService, over: Partial<JobQueueOptions> = {}, db = openJournalDatabase(':memory:')) {
  const journal = createJobJournal({ db, now: () => Date.now() });
  const events: QueueEvent[] = [];
  const queue = createJobQueue({
    journal,
    api,
    offlineProbeMs: 10,
    offlineProbeMaxMs: 40,
    onEvent: (e) => events.push(e),
    ...over,
  });
  return { journal, queue, events };
}

describe('the queue while the service is unreachable', () => {
  it('jobs composed offline wait for the service, then run once each with the key they first had', async () => {
    const service = new FlakyService();
    const { queue, journal } = makeQueue(service);
    await queue.start();
    expect(queue.offline()).not.toBeNull();
    const a = queue.enqueue(video('a'));
    const b = queue.enqueue(video('b'));
    await new Promise((r) => setTimeout(r, 30));
    expect(queue.get(a.id)?.state).toBe('queued');
    expect(queue.progress(a.id).hold).toMatchObject({ reason: 'offline', message: 'Waiting for the service' });
    expect(service.probes).toBeGreaterThan(1);
    expect(toQueueStats(queue.stats(), Date.now()).offline).toEqual({ nextTryInMs: expect.any(Number) });
    service.up = true;
    await until(() => queue.get(b.id)?.state === 'done');
    expect(queue.offline()).toBeNull();
    expect(queue.stats().offlineUntil).toBeNull();
    expect(queue.stats().limits).toEqual({ video: 2, image: 5 });
    expect(service.calls.map((c) => c.prompt).sort()).toEqual(['a', 'b']);
    expect(journal.transitions(a.id).map((t) => t.to)).toEqual(['queued', 'generating', 'done']);
    await queue.dispose();
  });

  it('a submit refused at the connection goes back to wait with its key kept, and is sent once more with it', async () => {
    const service = new FlakyService();
    service.up = true;
    const { queue, journal } = makeQueue(service, { limits: { video: 1, image: 1 } });
    await queue.start();
    service.up = false;
    const j = queue.enqueue(video('x'));
    await until(() => queue.offline() !== null && queue.get(j.id)?.state === 'queued');
    const key = queue.get(j.id)!.idempotencyKey;
    expect(key).toEqual(expect.any(String));
    expect(queue.progress(j.id).hold?.reason).toBe('offline');
    expect(queue.get(j.id)?.error).toBeNull();
    service.up = true;
    await until(() => queue.get(j.id)?.state === 'done');
    expect(service.calls).toEqual([{ prompt: 'x', key }]);
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual([
      'queued',
      'generating',
      'queued',
      'generating',
      'done',
    ]);
    await queue.dispose();
  });

  it('a start frame whose upload cannot reach the service waits too, then uploads and runs', async () => {
    const service = new FlakyService();
    service.up = true;
    let uploads = 0;
    const uploader = {
      upload: () => {
        uploads++;
        return service.up ? Promise.resolve({ url: 'http://svc/frame.png' }) : Promise.reject(refused());
      },
    };
    const { queue, journal } = makeQueue(service, { limits: { video: 1, image: 1 }, uploader });
    await queue.start();
    service.up = false;
    const j = queue.enqueue({ ...video('framed'), startFrame: '/tmp/frame.png' });
    await until(() => queue.offline() !== null && queue.get(j.id)?.state === 'queued');
    expect(queue.progress(j.id).hold?.reason).toBe('offline');
    service.up = true;
    await until(() => queue.get(j.id)?.state === 'done');
    expect(uploads).toBe(2);
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual([
      'queued',
      'uploading',
      'queued',
      'uploading',
      'generating',
      'done',
    ]);
    await queue.dispose();
  });

  it('an end frame whose upload cannot reach the service waits; the start frame already up is not sent again', async () => {
    const service = new FlakyService();
    service.up = true;
    const uploads: string[] = [];
    const uploader = {
      upload: ({ path }: { path: string }) => {
        uploads.push(path);
        // The service goes away after the start frame is up, while the end frame is on its way.
        if (path === '/tmp/start.png') service.up = false;
        return service.up || path === '/tmp/start.png'
          ? Promise.resolve({ url: `http://svc${path}` })
          : Promise.reject(refused());
      },
    };
    const { queue, journal } = makeQueue(service, { limits: { video: 1, image: 1 }, uploader });
    await queue.start();
    const j = queue.enqueue({ ...video('two frames'), startFrame: '/tmp/start.png', endFrame: '/tmp/end.png' });
    await until(() => queue.offline() !== null && queue.get(j.id)?.state === 'queued');
    expect(queue.progress(j.id).hold?.reason).toBe('offline');
    expect(queue.get(j.id)?.request).toMatchObject({ image_url: 'http://svc/tmp/start.png' });
    service.up = true;
    await until(() => queue.get(j.id)?.state === 'done');
    expect(uploads).toEqual(['/tmp/start.png', '/tmp/end.png', '/tmp/end.png']);
    expect(queue.get(j.id)?.request).toMatchObject({
      image_url: 'http://svc/tmp/start.png',
      end_image_url: 'http://svc/tmp/end.png',
    });
    expect(journal.transitions(j.id).map((t) => t.to)).toEqual([
      'queued',
      'uploading',
      'queued',
      'uploading',
      'generating',
      'done',
    ]);
    await queue.dispose();
  });

  it('the wait and its kept key survive a restart', async () => {
    const service = new FlakyService();
    service.up = true;
    const db = openJournalDatabase(':memory:');
    const first = makeQueue(service, { limits: { video: 1, image: 1 } }, db);
    await first.queue.start();
    service.up = false;
    const j = first.queue.enqueue(video('r'));
    await until(() => first.queue.get(j.id)?.state === 'queued' && first.queue.offline() !== null);
    const key = first.queue.get(j.id)!.idempotencyKey;
    await first.queue.dispose();
    const second = makeQueue(service, {}, db);
    await second.queue.start();
    expect(second.queue.progress(j.id).hold?.reason).toBe('offline');
    service.up = true;
    await until(() => second.queue.get(j.id)?.state === 'done');
    expect(service.calls).toEqual([{ prompt: 'r', key }]);
    await second.queue.dispose();
  });
});

describe('Submit at…', () => {
  it('a scheduled job waits for its time; "Submit now" sends it at once', async () => {
    const service = new FlakyService();
    service.up = true;
    const { queue } = makeQueue(service, { limits: { video: 2, image: 1 } });
    await queue.start();
    const later = queue.enqueue({ ...video('later'), submitAt: Date.now() + 3_600_000 });
    const soon = queue.enqueue({ ...video('soon'), submitAt: Date.now() + 30 });
    expect(queue.progress(later.id).hold).toMatchObject({ reason: 'scheduled', until: later.submitAt });
    await until(() => queue.get(soon.id)?.state === 'done');
    expect(queue.get(later.id)?.state).toBe('queued');
    queue.schedule(later.id, null);
    await until(() => queue.get(later.id)?.state === 'done');
    expect(() => queue.schedule(later.id, Date.now())).toThrow(/only a queued job/);
    expect(queue.schedule('nope', null)).toBeNull();
    await queue.dispose();
  });

  it('a batch is scheduled as one', () => {
    const service = new FlakyService();
    const { queue } = makeQueue(service);
    const at = Date.now() + 60_000;
    const jobs = queue.enqueueBatch({ ...video('b'), submitAt: at }, 3);
    expect(jobs.map((j) => j.submitAt)).toEqual([at, at, at]);
  });
});

describe('Running after Resume', () => {
  it('resume answers with stats that already count the jobs it starts, as the events do', async () => {
    const service = new FlakyService();
    service.up = true;
    service.hold = true;
    const { queue, events } = makeQueue(service, { limits: { video: 2, image: 1 } });
    await queue.start();
    queue.pause();
    queue.enqueue(video('a'));
    queue.enqueue(video('b'));
    const third = queue.enqueue(video('c'));
    await new Promise((r) => setTimeout(r, 5));
    events.length = 0;
    queue.resume();
    // What jobs.resume answers with, read right after the call as the handler does.
    expect(queue.stats().running.video).toBe(2);
    const lastStats = events.filter((e) => e.type === 'stats').at(-1);
    expect(lastStats?.type === 'stats' && lastStats.stats.running.video).toBe(2);
    // "When a slot frees": the third waits for a video slot (no run has finished yet: no estimate).
    expect(queue.progress(third.id).hold).toEqual({ reason: 'slot', message: 'Waiting for a video slot', until: null });
    // …and its row hears of it, although nothing happened to the job itself.
    expect(events.some((e) => e.type === 'job' && e.job.id === third.id)).toBe(true);
    for (const p of service.pending.splice(0)) p.resolve(response(p.prompt));
    await until(() => queue.get(third.id)?.state !== 'queued');
    expect(queue.progress(third.id).hold).toBeUndefined();
    for (const p of service.pending.splice(0)) p.resolve(response(p.prompt));
    await queue.dispose();
  });
});
