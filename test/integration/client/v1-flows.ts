// The CLI's commands and the app's main flows against a v1 service that is not ours
// (test/support/v1-service.ts): run by one file per variant of the double, like the S3 matrix.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRouterClient, type RouterClient } from '@orpc/server';
import { createApp, type App } from '../../../electron/app/composition-root.ts';
import { browserPlatform } from '../../../electron/app/platform.ts';
import type { IpcRouter } from '../../../electron/app/router.ts';
import { main } from '../../../electron/cli/main.ts';
import { createApiClient } from '../../../electron/core/api/index.ts';
import type { Job } from '../../../shared/ipc/index.ts';
import { memoryKeychain } from '../../support/memory-keychain.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import { startV1Double, type V1Double } from '../../support/v1-service.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function describeV1Flows(variant: 'minimal' | 'quirky'): void {
  const quirky = variant === 'quirky';
  const video = quirky ? 'acme/motion:v2' : 'acme/motion';
  const image = quirky ? 'acme/still:v2' : 'acme/still';
  let dir: string;
  let double: V1Double;
  let mp4: Buffer;
  let png: Buffer;
  let framePath: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), `clipdesk-v1-${variant}-`));
    ({ mp4, png } = await sampleMedia());
    double = await startV1Double({ quirky, mp4, png });
    framePath = path.join(dir, 'frame.png');
    await writeFile(framePath, png);
  });
  afterAll(async () => {
    await double.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** `clipdesk` in this process (the child-process form is tested in test/integration/cli). */
  async function cli(...args: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await main(['--base-url', double.url, '--data', path.join(dir, 'cli'), ...args], {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      readStdin: () => Promise.resolve(''),
      env: { HOME: dir, PATH: process.env['PATH'] ?? '', CLIPDESK_API_KEY: double.key },
      interactive: false,
    });
    return { code, stdout, stderr };
  }

  describe(`the client against a ${variant} v1 service`, () => {
    it('reads models, providers and usage without the extensions, and names the field that fails', async () => {
      const notices: string[] = [];
      const api = createApiClient({ baseUrl: double.url, getKey: () => double.key, onNotice: (l) => notices.push(l) });
      try {
        const { models } = await api.listModels();
        expect(models.map((m) => [m.id, m.media, m.parameters, m.providers])).toEqual([
          [video, 'video', undefined, undefined],
          [image, 'image', undefined, undefined],
        ]);
        // Without GET /models/:id (minimal) the list answers; with it, raw and percent-encoded ids.
        expect((await api.getModel(video)).id).toBe(video);
        expect((await api.getModel(encodeURIComponent(video))).id).toBe(video);
        const { providers } = await api.listProviders();
        expect(providers.map((p) => [p.slug, p.status, p.models])).toEqual([
          ['alpha', undefined, undefined],
          ['beta', undefined, undefined],
        ]);
        const usage = await api.getUsage();
        expect(usage.limits?.rate).toBeUndefined();
        expect(api.retentionDays).toBeNull();
        if (quirky) {
          expect(usage.tier).toBe('pro');
          expect(usage.usage).toBeUndefined();
          // Once per field, not once per record.
          expect(notices.filter((n) => n.includes('parameters'))).toHaveLength(1);
          expect(notices.some((n) => n.includes('result.usage'))).toBe(true);
        } else expect(notices).toEqual([]);
        // A single record that breaks the spec's layer names its field, not "body".
        await expect(api.getMedia('vid_missing')).rejects.toMatchObject({ code: 'not_found_error' });
      } finally {
        await api.dispose();
      }
    });
  });

  describe(`clipdesk against a ${variant} v1 service`, () => {
    let uploadedId: string;

    it('models, providers and usage show what the service tells, and say what it does not, once', async () => {
      const models = await cli('models');
      expect(models.code, models.stderr).toBe(0);
      expect(models.stdout).toContain(`${video}\tvideo\tAcme Motion\tprice known after generation`);
      expect(models.stderr.match(/price is known after generation/g)).toHaveLength(1);
      const providers = await cli('providers');
      expect(providers.code, providers.stderr).toBe(0);
      expect(providers.stdout).toContain('prov_alpha\talpha\t-\tAlpha Video\t-');
      const usage = await cli('usage');
      expect(usage.code, usage.stderr).toBe(0);
      expect(usage.stderr).toMatch(/reports only part of its usage/);
      if (quirky) expect(usage.stdout).toContain('tier\tpro');
      const json = await cli('usage', '--json');
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject(quirky ? { tier: 'pro' } : { requests: expect.any(Number) });
    });

    it('doctor finds the service reachable and the key accepted', async () => {
      const res = await cli('doctor', '--json');
      const checks = (JSON.parse(res.stdout) as { checks: Array<{ name: string; status: string; detail: string }> })
        .checks;
      expect(checks.find((c) => c.name === 'service')).toMatchObject({ status: 'ok' });
      expect(checks.find((c) => c.name === 'key')).toMatchObject({ status: 'ok' });
    });

    it('generate video downloads the file (a 429 waited out, a dropped download resumed)', async () => {
      const out = path.join(dir, 'out');
      // 400 emoji: 800 UTF-16 units, 400 characters as the spec counts them.
      const flags = `--model ${video} --duration 4 --out ${out}`.split(' ');
      const res = await cli('generate', 'video', '--prompt', '🦊'.repeat(400), ...flags);
      expect(res.code, res.stderr).toBe(0);
      const file = res.stdout.trim();
      expect(await readFile(file)).toEqual(mp4);
      if (quirky) {
        expect(res.stderr).toMatch(/retry in 1 seconds/);
        expect(double.dropped).toBeGreaterThan(0);
      }
    });

    it('generate image, and a video without --model takes the first video model', async () => {
      const img = await cli(
        'generate',
        'image',
        '--prompt',
        'a lighthouse',
        '--model',
        image,
        '--size',
        '512x512',
        '--out',
        path.join(dir, 'out'),
      );
      expect(img.code, img.stderr).toBe(0);
      expect(await readFile(img.stdout.trim())).toEqual(png);
      const any = await cli('generate', 'video', '--prompt', 'a kite', '--out', path.join(dir, 'out'));
      expect(any.code, any.stderr).toBe(0);
      expect(any.stderr).toContain(`with ${video}`);
    });

    it('upload PUTs the file with its own content type; --image uploads a start frame', async () => {
      const up = await cli('upload', framePath);
      expect(up.code, up.stderr).toBe(0);
      uploadedId = up.stdout.trim();
      expect(uploadedId).toMatch(/^upl_/);
      const withFrame = await cli(
        'generate',
        'video',
        '--prompt',
        'from a frame',
        '--model',
        video,
        '--image',
        framePath,
        '--out',
        path.join(dir, 'out'),
      );
      expect(withFrame.code, withFrame.stderr).toBe(0);
    });

    it('media list and media download (found in the list: the service has no GET /media/:id)', async () => {
      const list = await cli('media', 'list');
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain(uploadedId);
      const got = await cli('media', 'download', uploadedId, '--out', path.join(dir, 'media'));
      expect(got.code, got.stderr).toBe(0);
      expect(await readFile(got.stdout.trim())).toEqual(png);
    });

    it('generate --async takes the answer at once; generations list says there are none to list', async () => {
      const res = await cli(
        'generate',
        'image',
        '--async',
        '--prompt',
        'a gull',
        '--model',
        image,
        '--out',
        path.join(dir, 'out'),
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toMatch(/no asynchronous mode/);
      const list = await cli('generations', 'list');
      expect(list).toMatchObject({ code: 0, stdout: '' });
      expect(list.stderr).toMatch(/no asynchronous generations/);
    });

    it('an unknown model is a usage error (exit 2), not a failure of the lookup', async () => {
      const res = await cli('generate', 'video', '--prompt', 'x', '--model', 'acme/nothing');
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/Unknown model acme\/nothing/);
    });
  });

  describe(`the app against a ${variant} v1 service`, () => {
    let app: App;
    let ipc: RouterClient<IpcRouter>;

    beforeAll(async () => {
      app = createApp({
        dataDir: path.join(dir, 'app'),
        platform: browserPlatform,
        version: '0',
        mediaUrlPrefix: '/local-media/',
        secrets: memoryKeychain(),
        background: false,
        downloadDirOverride: path.join(dir, 'app-downloads'),
      });
      ipc = createRouterClient(app.router, { context: { transport: 'http' } });
      const profile = await ipc.profiles.create({ name: variant, baseUrl: double.url, key: double.key });
      await ipc.profiles.activate({ id: profile.id });
    });
    afterAll(async () => {
      await app.dispose();
    });

    async function settled(id: string): Promise<Job> {
      for (;;) {
        const job = await ipc.jobs.get({ id });
        if (job.state === 'done' || job.state === 'failed' || job.state === 'canceled') return job;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('compose: models, providers and usage as the service tells them', async () => {
      const { models } = await ipc.models.list();
      expect(models.map((m) => m.id)).toEqual([video, image]);
      expect((await ipc.models.get({ id: video })).media).toBe('video');
      const providers = await ipc.providers.list();
      expect(providers.keysHeldBy).toBe('operator');
      expect(providers.providers.map((p) => p.slug)).toEqual(['alpha', 'beta']);
      const usage = await ipc.usage.get();
      expect(usage.usage.limits).toBeUndefined();
    });

    it('generate with a start frame: uploaded, rendered, downloaded into the library', async () => {
      const frame = await ipc.uploads.fromBytes({
        file: new File([new Uint8Array(png)], 'frame.png', { type: 'image/png' }),
      });
      expect(frame.mediaId).toMatch(/^upl_/);
      const job = await ipc.jobs.submit({
        kind: 'video',
        model: video,
        prompt: 'a paper boat',
        duration: 4,
        startFrame: { kind: 'upload', mediaId: frame.mediaId, url: frame.url },
      });
      const done = await settled(job.id);
      expect(done.state, JSON.stringify(done.error)).toBe('done');
      expect(done.result?.paths).toHaveLength(1);
      expect((await stat(done.result!.paths[0]!)).size).toBe(mp4.length);
      const entry = await ipc.library.get({ id: done.result!.itemIds[0]! });
      expect(entry.localPath).toBe(done.result!.paths[0]);
    });

    it('library sync lists what the service holds; download fetches it', async () => {
      const sync = await ipc.library.sync({ full: true });
      expect(sync.requests).toBeGreaterThan(0);
      const page = await ipc.library.query({ media: 'image' });
      expect(page.items.length).toBeGreaterThan(0);
      const ids = page.items.map((i) => i.item.id);
      await ipc.library.download({ ids });
      const again = await ipc.library.downloadAgain({ id: ids[0]! });
      expect(again.localPath).toBeTruthy();
      expect(await readFile(again.localPath!)).toEqual(png);
    });
  });
}
