import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../../electron/app/composition-root.ts';
import { START_FRAME_STAND_IN } from '../../../../electron/app/submit-route.ts';
import { browserPlatform } from '../../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../../electron/app/router.ts';
import type { SecretStore } from '../../../../electron/core/secrets/index.ts';
import type { Job, JobRequestInput } from '../../../../shared/ipc/index.ts';
import { makePng } from '../../server/helpers.ts';

// compose.preview and the job's route on the real Local engine: the preview row of the request's
// mode is what the job is queued with, and what its generation then reports.
const noKeychain: SecretStore = {
  status: () => Promise.resolve({ backend: 'secret-service', available: true, message: 'ok' }),
  get: () => Promise.resolve(null),
  set: () => Promise.resolve(),
  delete: () => Promise.resolve(false),
  info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'secret-service' }),
};

let dir: string;
let app: App;
let ipc: RouterClient<IpcRouter>;
let frame: { kind: 'upload'; mediaId: string; url: string };
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-compose-preview-'));
  app = createApp({
    dataDir: dir,
    platform: browserPlatform,
    version: '0',
    mediaUrlPrefix: '/local-media/',
    secrets: noKeychain,
    background: false,
  });
  ipc = createRouterClient(app.router, { context: { transport: 'http' } });
  const png = await readFile(await makePng(dir, 'frame.png'));
  const uploaded = await ipc.uploads.fromBytes({ file: new File([png], 'frame.png', { type: 'image/png' }) });
  frame = { kind: 'upload', mediaId: uploaded.mediaId, url: uploaded.url };
});
afterAll(async () => {
  await app.dispose();
  await rm(dir, { recursive: true, force: true });
});

const i2v = (over: Partial<JobRequestInput> = {}): JobRequestInput => ({
  kind: 'video',
  model: 'clipdesk/motion',
  prompt: 'a paper boat',
  size: '360p',
  duration: 2,
  public: false,
  ...over,
});

async function settled(id: string): Promise<Job> {
  for (;;) {
    const job = await ipc.jobs.get({ id });
    if (job.state === 'done' || job.state === 'failed' || job.state === 'canceled') return job;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('compose.preview', () => {
  it('a start frame not uploaded yet routes as image-to-video through a stand-in URL that nothing fetches', async () => {
    const preview = await ipc.compose.preview(i2v({ startFrame: { kind: 'path', path: '/nowhere/frame.png' } }));
    expect(preview.rows.map((r) => [r.routing, r.provider?.slug, r.price, r.dropped])).toEqual([
      ['optimal', 'prism', 0.046, []],
      ['cheapest', 'swift', 0.02, ['image_url']],
      ['compatible', 'studio', 0.04, []],
    ]);
    expect(START_FRAME_STAND_IN).toMatch(/^https:\/\/[^/]+\.invalid\//);
  });

  it('is refused like the submit: the service’s message for a body no mode can render', async () => {
    await expect(ipc.compose.preview(i2v({ size: '999p' }))).rejects.toMatchObject({
      code: 'invalid_request_error',
      message: expect.stringContaining('size') as unknown,
    });
  });
});

describe('a job’s route', () => {
  it.each([
    ['optimal', 'local-prism', 0.046, []],
    ['cheapest', 'local-swift', 0.02, ['image_url']],
  ] as const)('%s: queued with the preview’s row, kept by the response', async (routing, provider, price, dropped) => {
    const request = i2v({ routing, startFrame: frame, prompt: `route ${routing}` });
    const preview = await ipc.compose.preview(request);
    const row = preview.rows.find((r) => r.routing === routing)!;
    const job = await ipc.jobs.submit(request);
    expect(job.route).toEqual({
      routing,
      providerId: row.provider!.id,
      providerName: row.provider!.name,
      price: row.price,
      dropped: row.dropped,
    });
    const done = await settled(job.id);
    expect(done.state).toBe('done');
    expect(done.route).toEqual({ routing, providerId: provider, providerName: row.provider!.name, price, dropped });
    expect(done.result?.price).toBe(price);
  });
});
