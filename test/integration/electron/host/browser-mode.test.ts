import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createORPCClient, ORPCError } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { startBrowserMode, type BrowserMode } from '../../../../electron/host/browser-mode.ts';
import type { IpcClient } from '../../../../shared/ipc/client.ts';
import type { AppEvent } from '../../../../shared/ipc/schemas/events.ts';
import type { Job } from '../../../../shared/ipc/schemas/jobs.ts';
import { runFfmpeg } from '../../../../shared/node/ffmpeg.ts';
import { errorCode } from '../../../support/ipc-errors.ts';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
let dir: string;
let mode: BrowserMode;
let ipc: IpcClient;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-browser-'));
  mode = await startBrowserMode({ root, version: '0.0.0-test', dataDir: dir, background: false });
  const cookie = `clipdesk_${mode.host.port}=${mode.host.secret}`;
  ipc = createORPCClient(new RPCLink({ url: `${mode.host.origin}/rpc`, headers: { cookie } }));
});

afterAll(async () => {
  await mode?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('browser mode against the real core and Local engine', () => {
  it('wires every route', async () => {
    const info = await ipc.app.info();
    expect(info.mode).toBe('browser');
    const settings = await ipc.settings.get();
    expect(settings.downloadDir).toBe(path.join(dir, 'downloads'));
    const profiles = await ipc.profiles.list();
    expect(profiles.profiles.find((p) => p.kind === 'local')).toBeDefined();
    expect(JSON.stringify(profiles)).not.toMatch(/sk[-_]/);
  });

  it('lists models and providers and usage from the engine', async () => {
    const { models } = await ipc.models.list({ media: 'video' });
    expect(models.length).toBeGreaterThan(0);
    expect((await ipc.providers.list()).providers.length).toBeGreaterThan(0);
    const usage = await ipc.usage.get();
    expect(usage.usage.tier).toBeTruthy();
  });

  it('generates a video: job events, library item on disk, GIF export over /local-media', async () => {
    const controller = new AbortController();
    const events: AppEvent[] = [];
    const stream = await ipc.events.subscribe({ types: ['job.updated'] }, { signal: controller.signal });
    const done = (async () => {
      for await (const ev of stream) {
        events.push(ev);
        if (ev.type === 'job.updated' && (ev.job.state === 'done' || ev.job.state === 'failed')) return ev.job;
      }
      return null;
    })();
    const { models } = await ipc.models.list({ media: 'video' });
    const job = await ipc.jobs.submit({
      kind: 'video',
      prompt: 'a red fox at dawn',
      model: models[0]!.id,
      duration: 2,
    });
    expect(job.state).toBe('queued');
    const finished = await done;
    controller.abort();
    expect(finished?.error).toBeNull();
    expect(finished?.state).toBe('done');
    expect(events.map((e) => (e.type === 'job.updated' ? e.job.state : ''))).toContain('generating');
    const itemId = finished!.result!.itemIds[0]!;
    const page = await ipc.library.query({ search: 'fox' });
    expect(page.total).toBeGreaterThanOrEqual(1);
    const entry = await ipc.library.get({ id: itemId });
    expect(entry.localPath && existsSync(entry.localPath)).toBe(true);
    expect(entry.localUrl).toMatch(/^\/local-media\/downloads\//);
    const gif = await ipc.library.export({ id: itemId, format: 'gif' });
    expect(gif.mime).toBe('image/gif');
    const cookie = `clipdesk_${mode.host.port}=${mode.host.secret}`;
    const res = await fetch(`${mode.host.origin}${gif.url}`, { headers: { cookie, range: 'bytes=0-5' } });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer()).toString('latin1')).toBe('GIF89a');
  });
});

/** Events of the given types until `until` says stop (or the stream is aborted). */
function collect(types: string[], until: (ev: AppEvent) => boolean) {
  const controller = new AbortController();
  const events: AppEvent[] = [];
  const ready = ipc.events.subscribe({ types }, { signal: controller.signal });
  const done = (async () => {
    for await (const ev of await ready) {
      events.push(ev);
      if (until(ev)) break;
    }
    controller.abort();
    return events;
  })();
  return { ready, done, stop: () => controller.abort() };
}

describe('jobs.remove', () => {
  it('removes a finished job (job.removed), refuses queued ones with conflict, and unknown ids with not_found', async () => {
    const { models } = await ipc.models.list({ media: 'image' });
    const finished = collect(['job.updated'], (ev) => ev.type === 'job.updated' && ev.job.state === 'done');
    await finished.ready;
    const job = await ipc.jobs.submit({ kind: 'image', prompt: 'a job to remove', model: models[0]!.id });
    await finished.done;

    const removed = collect(['job.removed'], (ev) => ev.type === 'job.removed');
    await removed.ready;
    expect(await ipc.jobs.remove({ id: job.id })).toEqual({ ok: true });
    expect(await removed.done).toEqual([{ type: 'job.removed', id: job.id }]);
    expect(await errorCode(ipc.jobs.get({ id: job.id }))).toBe('not_found');
    expect((await ipc.jobs.list()).jobs.map((j) => j.id)).not.toContain(job.id);
    expect(await errorCode(ipc.jobs.remove({ id: job.id }))).toBe('not_found');

    await ipc.jobs.pause();
    const waiting = await ipc.jobs.submit({ kind: 'image', prompt: 'still queued', model: models[0]!.id });
    const conflict: unknown = await ipc.jobs.remove({ id: waiting.id }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ORPCError);
    expect(conflict).toMatchObject({ code: 'conflict', message: expect.stringMatching(/cancel it first/) as unknown });
    await ipc.jobs.cancel({ id: waiting.id });
    expect(await ipc.jobs.remove({ id: waiting.id })).toEqual({ ok: true });
    await ipc.jobs.resume();
  });
});

describe('per-job transfer progress', () => {
  it('a job with a start image and a download reports upload and download progress ending at total', async () => {
    // In the download folder: a path main accepts from the renderer in browser mode too.
    const downloads = (await ipc.settings.get()).downloadDir;
    await mkdir(downloads, { recursive: true });
    const frame = path.join(downloads, 'start-frame.png');
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240', '-frames:v', '1', frame]);
    const { models } = await ipc.models.list({ media: 'video' });

    const updates = collect(
      ['job.updated'],
      (ev) => ev.type === 'job.updated' && (ev.job.state === 'done' || ev.job.state === 'failed'),
    );
    await updates.ready;
    const job = await ipc.jobs.submit({
      kind: 'video',
      prompt: 'a lighthouse from a start frame',
      model: models[0]!.id,
      duration: 2,
      startFrame: { kind: 'path', path: frame },
    });
    const jobs = (await updates.done).flatMap((ev) =>
      ev.type === 'job.updated' && ev.job.id === job.id ? [ev.job] : [],
    );
    const last = jobs.at(-1)!;
    expect(last.error).toBeNull();
    expect(last.state).toBe('done');

    const uploads = jobs.map((j) => j.upload).filter((p): p is NonNullable<Job['upload']> => p !== null);
    const frameBytes = (await stat(frame)).size;
    expect(uploads.length).toBeGreaterThan(0);
    expect(uploads.at(-1)).toEqual({ done: frameBytes, total: frameBytes });
    expect(jobs.find((j) => j.state === 'uploading')).toBeDefined();

    const downloadsSeen = jobs.map((j) => j.download).filter((p): p is NonNullable<Job['download']> => p !== null);
    const fileBytes = (await stat(last.result!.paths[0]!)).size;
    expect(downloadsSeen.length).toBeGreaterThan(0);
    expect(last.download).toEqual({ done: fileBytes, total: fileBytes });
    // Progress never goes backwards within a transfer.
    const done = downloadsSeen.map((p) => p.done);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    // The job read back carries the same progress.
    expect((await ipc.jobs.get({ id: job.id })).upload).toEqual({ done: frameBytes, total: frameBytes });
  });
});

describe('local paths from the renderer', () => {
  it('uploads.probe, uploads.fromPath and path start frames take only granted paths or files in the app folders', async () => {
    const dropped = path.join(dir, 'dropped-elsewhere.png');
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'testsrc=size=64x48', '-frames:v', '1', dropped]);
    const { models } = await ipc.models.list({ media: 'video' });
    const submit = (file: string) =>
      ipc.jobs.submit({
        kind: 'video',
        prompt: 'from a path',
        model: models[0]!.id,
        startFrame: { kind: 'path', path: file },
      });

    for (const file of ['/etc/passwd', dropped, path.join(dir, 'downloads', '..', 'dropped-elsewhere.png')]) {
      expect(await errorCode(ipc.uploads.probe({ path: file }))).toBe('forbidden');
      expect(await errorCode(ipc.uploads.fromPath({ path: file }))).toBe('forbidden');
      expect(await errorCode(submit(file))).toBe('forbidden');
      expect(
        await errorCode(
          ipc.jobs.submitBatch({
            request: { kind: 'video', prompt: 'batch', model: models[0]!.id, startFrame: { kind: 'path', path: file } },
            count: 2,
          }),
        ),
      ).toBe('forbidden');
    }
    // A file under the download folder is main's own.
    const inDownloads = path.join((await ipc.settings.get()).downloadDir, 'start-frame.png');
    await mkdir(path.dirname(inDownloads), { recursive: true });
    await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'testsrc=size=64x48', '-frames:v', '1', inDownloads]);
    expect((await ipc.uploads.probe({ path: inDownloads })).width).toBe(64);

    // What Electron main does when the preload reports a dropped file's path.
    expect(mode.app.grantDroppedPath(dropped)).toBe(true);
    expect((await ipc.uploads.probe({ path: dropped })).width).toBe(64);
    const uploaded = await ipc.uploads.fromPath({ path: dropped });
    expect(uploaded.bytes).toBe((await stat(dropped)).size);
  });
});

describe('library.sync', () => {
  it('reports the items the service now describes differently as updated', async () => {
    const { models } = await ipc.models.list({ media: 'image' });
    const finished = collect(['job.updated'], (ev) => ev.type === 'job.updated' && ev.job.state === 'done');
    await finished.ready;
    await ipc.jobs.submit({ kind: 'image', prompt: 'indexed from the generation response', model: models[0]!.id });
    await finished.done;
    // The job indexed its item from the generation response; GET /media describes it in full.
    const changes = collect(
      ['library.changed'],
      (ev) => ev.type === 'library.changed' && ev.change.reason === 'favourite',
    );
    await changes.ready;
    const first = await ipc.library.sync({ full: true });
    expect(first.updated).toBeGreaterThanOrEqual(1);
    const again = await ipc.library.sync({ full: true });
    expect(again).toMatchObject({ added: 0, updated: 0 });
    // A sync that changed nothing tells no one: open grids would requery on every timer tick.
    // The favourite marks the end of the events to look at (the bus keeps order).
    const { items } = await ipc.library.query({});
    await ipc.library.setFavourite({ ids: [items[0]!.item.id], favourite: true });
    const seen = (await changes.done).map((ev) => (ev.type === 'library.changed' ? ev.change.reason : ev.type));
    expect(seen).toEqual(['sync', 'favourite']);
  });
});
