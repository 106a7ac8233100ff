// A job request through jobs.submit: what the queue is given, and what the renderer gets back.
import { describe, expect, it } from 'vitest';
import { jobsHandlers } from '../../../../electron/app/handlers/jobs.ts';
import type { ServiceSession } from '../../../../electron/app/types.ts';
import type { NewJob, Job as CoreJob } from '../../../../electron/core/jobs/index.ts';
import { JobRequest } from '../../../../shared/ipc/schemas/jobs.ts';
import type { JobRequestInput } from '../../../../shared/ipc/schemas/jobs.ts';
import type { RoutingPreview } from '../../../../shared/api/routing.ts';
import { END_FRAME_STAND_IN, previewBody, START_FRAME_STAND_IN } from '../../../../electron/app/submit-route.ts';
import { coreJob } from '../../../support/core-job.ts';
import { ServiceError } from '../../../../electron/core/api/index.ts';
import { toJob } from '../../../../electron/app/mappers.ts';

function harness(
  library: Record<string, { downloadedPath: string | null; media: string; url: string }> = {},
  // The service's routing preview; by default unreachable (offline), so jobs are queued without a route.
  preview: (body: unknown) => Promise<RoutingPreview> = () => Promise.reject(new Error('offline')),
) {
  const enqueued: NewJob[] = [];
  const previewed: unknown[] = [];
  const jobs: CoreJob[] = [];
  const remembered: [string, string][] = [];
  const uploaded: string[] = [];
  const toCore = (input: NewJob): CoreJob => {
    const job = coreJob(`job_${jobs.length}`, 0, {
      kind: input.kind,
      request: input.request,
      startFrame: input.startFrame ?? null,
      endFrame: input.endFrame ?? null,
      position: jobs.length,
      variationOf: input.variationOf ?? null,
      route: input.route ?? null,
    });
    enqueued.push(input);
    jobs.push(job);
    return job;
  };
  const session = {
    // The service is unreachable (as for the preview): nothing may depend on an upload at submit.
    uploader: {
      upload: (source: { path: string }) => {
        uploaded.push(source.path);
        return Promise.reject(
          new ServiceError('network_error', 'Could not reach the service', {
            cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
          }),
        );
      },
    },
    api: {
      previewRouting: (body: unknown) => {
        previewed.push(body);
        return preview(body);
      },
    },
    queue: {
      enqueue: toCore,
      enqueueBatch: (input: NewJob, count: number) =>
        Array.from({ length: count }, (_, i) => toCore({ ...input, request: { ...input.request, seed: i } })),
      list: () => jobs,
      progress: () => ({ upload: null, download: null }),
      holdOf: () => null,
    },
    library: {
      chains: { rememberJob: (jobId: string, parentId: string) => remembered.push([jobId, parentId]) },
      get: (id: string) => {
        const entry = library[id];
        return entry
          ? { downloadedPath: entry.downloadedPath, item: { id, media: entry.media, url: entry.url } }
          : null;
      },
    },
  } as unknown as ServiceSession;
  const handlers = jobsHandlers(
    () => Promise.resolve(session),
    () => 0,
    (file) => Promise.resolve(`/granted${file}`),
  );
  const submit = (input: JobRequestInput) =>
    handlers.submit(JobRequest.parse(input), { signal: new AbortController().signal } as never);
  return { enqueued, previewed, submit, handlers, remembered, uploaded };
}

describe('job requests: the v1 request plus the app fields', () => {
  it('a shot that continues another: the library remembers the parent, the service never sees it', async () => {
    const h = harness({ m_parent: { downloadedPath: '/d/p.mp4', media: 'video', url: 'http://x/p.mp4' } });
    const job = await h.submit({
      kind: 'video',
      prompt: 'the next shot',
      model: 'clipdesk/motion',
      startFrame: { kind: 'path', path: '/frames/p-last.png' },
      parentItemId: 'm_parent',
    });
    expect(h.enqueued[0]!.request).not.toHaveProperty('parentItemId');
    expect(h.enqueued[0]!.startFrame).toBe('/granted/frames/p-last.png');
    expect(h.remembered).toEqual([[job.id, 'm_parent']]);
    await expect(
      h.submit({ kind: 'video', prompt: 'x', model: 'clipdesk/motion', parentItemId: 'm_gone' }),
    ).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('gives the queue the v1 request as the user made it, defaults applied', async () => {
    const h = harness();
    const job = await h.submit({
      kind: 'video',
      prompt: '  a fox  ',
      model: 'clipdesk/motion',
      size: '720p',
      duration: 4,
      seed: 7,
      style: 'noir',
      aspect_ratio: '16:9',
      provider: 'swift',
    });
    expect(h.enqueued[0]).toEqual({
      kind: 'video',
      request: {
        prompt: 'a fox',
        model: 'clipdesk/motion',
        routing: 'optimal',
        public: true,
        provider: 'swift',
        seed: 7,
        size: '720p',
        style: 'noir',
        aspect_ratio: '16:9',
        duration: 4,
      },
      startFrame: null,
      endFrame: null,
      route: null,
    });
    expect(job.request).toEqual({
      kind: 'video',
      prompt: 'a fox',
      model: 'clipdesk/motion',
      routing: 'optimal',
      public: true,
      provider: 'swift',
      seed: 7,
      size: '720p',
      style: 'noir',
      aspect_ratio: '16:9',
      duration: 4,
    });
  });

  it("carries the model's own parameters as fields of the v1 request, and reads them back", async () => {
    const h = harness();
    const parameters = { negative_prompt: 'blur', cfg_scale: 0.5, audio: true };
    const job = await h.submit({ kind: 'video', prompt: 'p', model: 'kling/v2.1', aspect_ratio: '16:9', parameters });
    expect(h.enqueued[0]!.request).toEqual({
      prompt: 'p',
      model: 'kling/v2.1',
      routing: 'optimal',
      public: true,
      aspect_ratio: '16:9',
      ...parameters,
    });
    expect(job.request).toMatchObject({ aspect_ratio: '16:9', parameters });
  });

  it('refuses at the IPC boundary a parameter that would stand in for a field, or is no value', () => {
    const base = { kind: 'video', prompt: 'p', model: 'kling/v2.1' } as const;
    for (const parameters of [
      { model: 'other/model' },
      { image_url: 'http://x/y.png' },
      { aspect_ratio: '1:1' },
      { 'bad name': 1 },
      { nested: { a: 1 } },
      { too_long: 'x'.repeat(10_001) },
    ])
      expect(JobRequest.safeParse({ ...base, parameters }).success, JSON.stringify(parameters)).toBe(false);
    expect(JobRequest.safeParse({ ...base, parameters: { cfg_scale: 0.5, camera_fixed: false } }).success).toBe(true);
  });

  it('drops a duration from an image job', async () => {
    const h = harness();
    const job = await h.submit({ kind: 'image', prompt: 'p', model: 'clipdesk/still', duration: 3, public: false });
    expect(h.enqueued[0]!.request).toEqual({ prompt: 'p', model: 'clipdesk/still', routing: 'optimal', public: false });
    expect(job.request).toEqual({
      kind: 'image',
      prompt: 'p',
      model: 'clipdesk/still',
      routing: 'optimal',
      public: false,
    });
  });

  it('turns each kind of start frame into a file to upload first or the image_url', async () => {
    const h = harness({
      med_local: { downloadedPath: '/dl/a.png', media: 'image', url: 'http://svc/a.png' },
      med_remote: { downloadedPath: null, media: 'image', url: 'http://svc/b.png' },
      med_video: { downloadedPath: '/dl/c.mp4', media: 'video', url: 'http://svc/c.mp4' },
    });
    const base = { kind: 'video' as const, prompt: 'p', model: 'clipdesk/motion' };
    const path = await h.submit({ ...base, startFrame: { kind: 'path', path: '/x.png' } });
    const url = await h.submit({ ...base, startFrame: { kind: 'url', url: 'https://e.com/x.png' } });
    const upload = await h.submit({
      ...base,
      startFrame: { kind: 'upload', mediaId: 'med_u', url: 'http://svc/u.png' },
    });
    const local = await h.submit({ ...base, startFrame: { kind: 'item', itemId: 'med_local' } });
    const remote = await h.submit({ ...base, startFrame: { kind: 'item', itemId: 'med_remote' } });
    const video = await h.submit({ ...base, startFrame: { kind: 'item', itemId: 'med_video' } });
    expect(h.enqueued.map((e) => [e.startFrame, e.request.image_url])).toEqual([
      ['/granted/x.png', undefined],
      [null, 'https://e.com/x.png'],
      [null, 'http://svc/u.png'],
      ['/dl/a.png', undefined],
      [null, 'http://svc/b.png'],
      [null, 'http://svc/c.mp4'],
    ]);
    expect([path, url, upload, local, remote, video].map((j) => j.request.startFrame)).toEqual([
      { kind: 'path', path: '/granted/x.png' },
      { kind: 'url', url: 'https://e.com/x.png' },
      { kind: 'url', url: 'http://svc/u.png' },
      { kind: 'path', path: '/dl/a.png' },
      { kind: 'url', url: 'http://svc/b.png' },
      { kind: 'url', url: 'http://svc/c.mp4' },
    ]);
    for (const j of [path, url, upload, local, remote, video]) expect(j.request).not.toHaveProperty('image_url');
    await expect(h.submit({ ...base, startFrame: { kind: 'item', itemId: 'med_gone' } })).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('a batch gives each job the request, with its own seed', async () => {
    const h = harness();
    const { jobs } = await h.handlers.submitBatch(
      { request: JobRequest.parse({ kind: 'image', prompt: 'p', model: 'clipdesk/still' }), count: 2 },
      { signal: new AbortController().signal } as never,
    );
    expect(jobs.map((j) => j.request.seed)).toEqual([0, 1]);
  });

  it('one submit path: a batch of one is an ordinary job, and it joins a shot chain like a submit', async () => {
    const h = harness({ med_1: { downloadedPath: null, media: 'video', url: 'http://svc/med_1.mp4' } });
    const signal = { signal: new AbortController().signal } as never;
    const { jobs } = await h.handlers.submitBatch(
      {
        request: JobRequest.parse({ kind: 'video', prompt: 'p', model: 'clipdesk/motion', parentItemId: 'med_1' }),
        count: 1,
      },
      signal,
    );
    // No batch seed forced on it: the service picks one, as for a Generate press.
    expect(jobs[0]!.request.seed).toBeUndefined();
    expect(h.remembered).toEqual([[jobs[0]!.id, 'med_1']]);
    await expect(
      h.handlers.submitBatch(
        {
          request: JobRequest.parse({ kind: 'video', prompt: 'p', model: 'clipdesk/motion', parentItemId: 'gone' }),
          count: 2,
        },
        signal,
      ),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('variations of a library video: one job of n with its source, read back as the app sent it', async () => {
    const h = harness();
    const job = await h.submit({
      kind: 'video',
      prompt: 'the source prompt',
      model: 'clipdesk/motion',
      variationOf: 'med_7',
      variations: 3,
    });
    expect(h.enqueued[0]).toMatchObject({
      kind: 'video',
      variationOf: 'med_7',
      request: { prompt: 'the source prompt', model: 'clipdesk/motion', n: 3 },
    });
    expect(job.request).toMatchObject({ variationOf: 'med_7', variations: 3 });
    expect(() => JobRequest.parse({ kind: 'image', prompt: 'x', model: 'm', variationOf: 'med_7' })).toThrow(
      /variations are made of videos/,
    );
    expect(() => JobRequest.parse({ kind: 'video', prompt: 'x', model: 'm', variations: 2 })).toThrow(
      /variations needs variationOf/,
    );
    expect(() =>
      JobRequest.parse({ kind: 'video', prompt: 'x', model: 'm', variationOf: 'med_7', variations: 5 }),
    ).toThrow();
  });

  it('a job is queued with the preview row of its mode; a file not uploaded yet is previewed through the stand-in', async () => {
    const row = (
      routing: 'optimal' | 'cheapest' | 'compatible',
      slug: string,
      price: number,
      dropped: string[] = [],
    ) => ({
      routing,
      provider: { id: `local-${slug}`, slug, name: `Local ${slug}` },
      unitPrice: price,
      price,
      dropped,
      reason: 'why',
      error: null,
    });
    const h = harness({}, () =>
      Promise.resolve({
        model: 'clipdesk/motion:1.1',
        media: 'video',
        count: 1,
        routing: 'cheapest',
        pinned: null,
        rows: [
          row('optimal', 'prism', 0.046),
          row('cheapest', 'swift', 0.02, ['image_url']),
          row('compatible', 'studio', 0.04),
        ],
      }),
    );
    const job = await h.submit({
      kind: 'video',
      prompt: 'p',
      model: 'clipdesk/motion',
      routing: 'cheapest',
      startFrame: { kind: 'path', path: '/x.png' },
    });
    expect(h.previewed[0]).toMatchObject({ routing: 'cheapest', image_url: START_FRAME_STAND_IN });
    expect(h.enqueued[0]!.request).not.toHaveProperty('image_url');
    expect(job.route).toEqual({
      routing: 'cheapest',
      providerId: 'local-swift',
      providerName: 'Local swift',
      price: 0.02,
      dropped: ['image_url'],
    });
  });
});

describe('the end frame', () => {
  const base = {
    kind: 'video' as const,
    prompt: 'the tide comes in',
    model: 'minimax/hailuo-02',
    startFrame: { kind: 'url' as const, url: 'https://e.com/start.png' },
  };

  it('a local file goes to the queue as the job’s end frame, not uploaded at submit: offline, it is queued', async () => {
    const h = harness();
    const job = await h.submit({ ...base, endFrame: { kind: 'path', path: '/end.png' } });
    expect(h.uploaded).toEqual([]);
    expect(h.enqueued[0]).toMatchObject({ startFrame: null, endFrame: '/granted/end.png' });
    expect(h.enqueued[0]!.request).toMatchObject({ image_url: 'https://e.com/start.png' });
    expect(h.enqueued[0]!.request).not.toHaveProperty('end_image_url');
    // Edit/restore gets it back as the file it was, not as a model parameter.
    expect(job.request.endFrame).toEqual({ kind: 'path', path: '/granted/end.png' });
    expect(job.request.parameters ?? {}).not.toHaveProperty('end_image_url');
  });

  it('a library image’s downloaded file is the end frame too; a URL, an upload or a remote item goes as it is', async () => {
    const h = harness({
      med_end: { downloadedPath: null, media: 'image', url: 'http://svc/v1/media/med_end' },
      med_local: { downloadedPath: '/dl/end.png', media: 'image', url: 'http://svc/v1/media/med_local' },
    });
    await h.submit({ ...base, endFrame: { kind: 'url', url: 'https://e.com/end.png' } });
    await h.submit({ ...base, endFrame: { kind: 'upload', mediaId: 'med_u', url: 'http://svc/v1/uploads/u' } });
    await h.submit({ ...base, endFrame: { kind: 'item', itemId: 'med_end' } });
    await h.submit({ ...base, endFrame: { kind: 'item', itemId: 'med_local' } });
    expect(h.uploaded).toEqual([]);
    expect(h.enqueued.map((j) => [j.endFrame, j.request['end_image_url']])).toEqual([
      [null, 'https://e.com/end.png'],
      [null, 'http://svc/v1/uploads/u'],
      [null, 'http://svc/v1/media/med_end'],
      ['/dl/end.png', undefined],
    ]);
  });

  it('reads back a local end frame as its file, uploaded or not, as the start frame is', () => {
    const uploaded = coreJob('j', 0, {
      startFrame: '/s.png',
      endFrame: '/e.png',
      request: {
        model: 'm',
        prompt: 'p',
        image_url: 'http://svc/v1/uploads/s',
        end_image_url: 'http://svc/v1/uploads/e',
      },
    });
    expect(toJob(uploaded, new Map(), 0).request).toMatchObject({
      startFrame: { kind: 'path', path: '/s.png' },
      endFrame: { kind: 'path', path: '/e.png' },
    });
    expect(toJob(uploaded, new Map(), 0).request.parameters ?? {}).not.toHaveProperty('end_image_url');
  });

  it('is routed at submit through its stand-in, with the same body as the preview, batch or not', async () => {
    const bodies: unknown[] = [];
    const h = harness({}, (body) => {
      bodies.push(body);
      return Promise.resolve({
        model: 'minimax/hailuo-02',
        media: 'video',
        count: 1,
        routing: 'optimal',
        pinned: null,
        rows: [
          {
            routing: 'optimal',
            provider: { id: 'fal', slug: 'fal', name: 'fal.ai' },
            unitPrice: 0.27,
            price: 0.27,
            dropped: [],
            reason: 'why',
            error: null,
          },
        ],
      });
    });
    const input = { ...base, endFrame: { kind: 'path' as const, path: '/end.png' } };
    const job = await h.submit(input);
    expect(bodies[0]).toEqual(previewBody(JobRequest.parse(input)));
    expect(bodies[0]).toMatchObject({ image_url: 'https://e.com/start.png', end_image_url: END_FRAME_STAND_IN });
    expect(h.enqueued[0]!.request).not.toHaveProperty('end_image_url');
    expect(job.route).toMatchObject({ providerId: 'fal', price: 0.27 });
    const { jobs } = await h.handlers.submitBatch({ request: JobRequest.parse(input), count: 2 }, {
      signal: new AbortController().signal,
    } as never);
    expect(h.previewed.at(-1)).toMatchObject({ end_image_url: END_FRAME_STAND_IN, seed: 0 });
    expect(h.enqueued.slice(1).map((e) => e.endFrame)).toEqual(['/granted/end.png', '/granted/end.png']);
    expect(jobs.map((j) => j.route?.price)).toEqual([0.27, 0.27]);
  });

  it('is previewed through its stand-in until it has a URL', () => {
    const r = JobRequest.parse({ ...base, endFrame: { kind: 'path', path: '/end.png' } });
    expect(previewBody(r)).toMatchObject({ end_image_url: END_FRAME_STAND_IN });
    expect(previewBody(r)).not.toHaveProperty('endFrame');
  });

  it('is refused at the IPC boundary without a start frame, on an image job, or as a model parameter', () => {
    const end = { kind: 'url' as const, url: 'https://e.com/end.png' };
    expect(JobRequest.safeParse({ ...base, startFrame: undefined, endFrame: end }).success).toBe(false);
    expect(JobRequest.safeParse({ ...base, kind: 'image', model: 'clipdesk/still', endFrame: end }).success).toBe(
      false,
    );
    expect(JobRequest.safeParse({ ...base, parameters: { end_image_url: 'https://e.com/end.png' } }).success).toBe(
      false,
    );
  });
});
