import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { Server, IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClient } from '../../../../../electron/core/api/index.ts';
import type { ApiClient, WaitNotice } from '../../../../../electron/core/api/index.ts';
import { RetryBudget } from '../../../../../electron/core/api/retry.ts';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';
import type { MediaItem } from '../../../../../shared/api/index.ts';
import { downloadItem } from './fixtures.ts';

const payload = randomBytes(300_000);
const sha = createHash('sha256').update(payload).digest('hex');

interface Options {
  /** Cut the connection after this many body bytes on the first GET of the file. */
  cutAfter?: number;
  /** Send this many body bytes on the first GET of the file, then nothing more (the socket stays open). */
  stallAfter?: number;
  /** Every GET of the file is cut before any byte. */
  cutAlways?: boolean;
  content?: boolean;
}

let server: Server;
let origin: string;
let seen: Array<{ url: string; headers: IncomingHttpHeaders }>;
let dir: string;
let api: ApiClient;
let opts: Options;

beforeEach(async () => {
  seen = [];
  opts = {};
  let cut = false;
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const isContent = req.url === '/v1/media/med_1/content';
    if (isContent && !opts.content) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, message: 'Not found', code: 'not_found_error' }));
      return;
    }
    if (!isContent && req.url !== '/files/med_1.mp4') {
      res.writeHead(404).end();
      return;
    }
    if (opts.cutAlways) {
      req.socket.destroy();
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const etag = '"v1"';
    let start = 0;
    if (range && req.headers['if-range'] === etag) {
      start = Number(range[1]);
      res.writeHead(206, {
        'content-type': 'video/mp4',
        etag,
        'content-length': payload.length - start,
        'content-range': `bytes ${start}-${payload.length - 1}/${payload.length}`,
      });
    } else {
      res.writeHead(200, { 'content-type': 'video/mp4', etag, 'content-length': payload.length });
    }
    const body = payload.subarray(start);
    if (opts.cutAfter !== undefined && !cut) {
      cut = true;
      res.write(body.subarray(0, opts.cutAfter), () => setTimeout(() => res.socket?.destroy(), 300));
      return;
    }
    if (opts.stallAfter !== undefined && !cut) {
      cut = true;
      res.write(body.subarray(0, opts.stallAfter));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-dl-'));
  api = createApiClient({ baseUrl: `${origin}/v1`, getKey: () => 'sk-test' });
});

afterEach(async () => {
  await api.dispose();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

const item = (): MediaItem => downloadItem(origin, payload.length);

const noSleep = (): Promise<void> => Promise.resolve();

describe('download manager', () => {
  it('falls back to the item URL when the service has no content endpoint, and writes a sidecar', async () => {
    const manager = createDownloadManager({ api, dir, sleep: noSleep });
    const progress: number[] = [];
    const res = await manager.download({
      item: item(),
      context: { routing: 'cheapest', price: 0.1 },
      onProgress: (p) => progress.push(p.received),
    });
    expect(res.source).toBe('url');
    expect(res.path).toBe(join(dir, '2026-02/local_mosaic/2026-02-03T04-05-06Z-med_1.mp4'));
    expect(
      createHash('sha256')
        .update(await readFile(res.path))
        .digest('hex'),
    ).toBe(sha);
    expect(progress.at(-1)).toBe(payload.length);
    const side = JSON.parse(await readFile(res.sidecarPath, 'utf8'));
    expect(side).toMatchObject({
      id: 'med_1',
      prompt: 'a red fox',
      model: 'local/mosaic',
      routing: 'cheapest',
      price: 0.1,
      sha256: sha,
    });
    const files = await readdir(join(dir, '2026-02/local_mosaic'));
    expect(files.sort()).toEqual(['2026-02-03T04-05-06Z-med_1.mp4', '2026-02-03T04-05-06Z-med_1.mp4.json']);
  });

  it('uses the authenticated content endpoint when there is one', async () => {
    opts.content = true;
    const manager = createDownloadManager({ api, dir, sleep: noSleep });
    const res = await manager.download({ item: item() });
    expect(res.source).toBe('content');
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-test');
  });

  it('keeps a file already on disk, unless asked to replace it ("Download again")', async () => {
    const manager = createDownloadManager({ api, dir, sleep: noSleep });
    const target = manager.pathFor(item());
    await manager.download({ item: item() });
    await writeFile(target, 'a damaged copy');
    const kept = await manager.download({ item: item() });
    expect(kept.source).toBe('existing');
    expect(await readFile(target, 'utf8')).toBe('a damaged copy');
    const requests = seen.length;
    const again = await manager.download({ item: item(), replace: true });
    expect(again.source).toBe('url');
    expect(seen.length).toBeGreaterThan(requests);
    expect(again.sha256).toBe(sha);
    expect(
      createHash('sha256')
        .update(await readFile(target))
        .digest('hex'),
    ).toBe(sha);
  });

  it('resumes with Range and If-Range after the connection drops, to an identical file', async () => {
    opts.cutAfter = 100_000;
    const manager = createDownloadManager({ api, dir, sleep: noSleep });
    const res = await manager.download({ item: item() });
    expect(res.resumes).toBe(1);
    expect(res.sha256).toBe(sha);
    const resumed = seen.at(-1)!;
    expect(resumed.headers.range).toMatch(/^bytes=\d+-$/);
    expect(Number(/\d+/.exec(resumed.headers.range!)![0])).toBeGreaterThan(0);
    expect(resumed.headers['if-range']).toBe('"v1"');
    expect(
      createHash('sha256')
        .update(await readFile(res.path))
        .digest('hex'),
    ).toBe(sha);
  });

  it('drops a connection that stops sending, and resumes it from the bytes it kept', async () => {
    opts.stallAfter = 100_000;
    const manager = createDownloadManager({ api, dir, sleep: noSleep, idleTimeoutMs: 200 });
    const res = await manager.download({ item: item() });
    expect(res.resumes).toBe(1);
    expect(res.sha256).toBe(sha);
    expect(Number(/\d+/.exec(seen.at(-1)!.headers.range ?? '')?.[0])).toBeGreaterThan(0);
  });

  it("a download's retries wait within the budget it is given, and say each wait first", async () => {
    opts.cutAlways = true;
    const slept: number[] = [];
    const sleep = (ms: number): Promise<void> => {
      slept.push(ms);
      return Promise.resolve();
    };
    const manager = createDownloadManager({ api, dir, sleep, random: () => 1, maxAttempts: 10 });
    const notices: WaitNotice[] = [];
    const budget = new RetryBudget(1_000);
    await expect(
      manager.download({ item: item(), retryBudget: budget, onWait: (n) => notices.push(n) }),
    ).rejects.toMatchObject({ code: 'network_error' });
    // 250 + 500 ms fit in the 1 000 ms budget, the next backoff (1 000) does not.
    expect(slept).toEqual([250, 500]);
    expect(budget.spentMs).toBe(750);
    expect(seen.filter((r) => r.url === '/files/med_1.mp4')).toHaveLength(3);
    expect(notices.map((n) => [n.reason, n.ms, n.what])).toEqual([
      ['retry', 250, 'the download of med_1'],
      ['retry', 500, 'the download of med_1'],
    ]);
  });

  it('starts over when the part on disk is from another version of the file', async () => {
    const manager = createDownloadManager({ api, dir, sleep: noSleep });
    const target = manager.pathFor(item());
    await manager.download({ item: item() }).then((r) => rm(r.path));
    await writeFile(`${target}.part`, Buffer.from('stale bytes'));
    await writeFile(`${target}.part.json`, JSON.stringify({ validator: '"old"', total: 999 }));
    const res = await manager.download({ item: item() });
    expect(res.sha256).toBe(sha);
    expect(res.resumes).toBe(0);
  });

  it('rejects a download whose length is wrong', async () => {
    const manager = createDownloadManager({ api, dir, sleep: noSleep, maxAttempts: 1 });
    await expect(
      manager.download({ item: { ...item(), formats: [{ mime: 'video/mp4', url: item().url, bytes: 5 }] } }),
    ).rejects.toMatchObject({ code: 'invalid_response' });
  });

  it('never runs more downloads at once than its cap', async () => {
    const manager = createDownloadManager({ api, dir, sleep: noSleep, concurrency: 2 });
    let peak = 0;
    manager.onProgress(() => (peak = Math.max(peak, manager.active)));
    const items = [1, 2, 3, 4, 5].map((n) => ({ ...item(), id: `med_1`, createdAt: `2026-02-0${n}T00:00:00.000Z` }));
    const results = await Promise.all(items.map((i) => manager.download({ item: i })));
    expect(results.every((r) => r.sha256 === sha)).toBe(true);
    expect(peak).toBeLessThanOrEqual(2);
    expect(peak).toBeGreaterThan(0);
  });

  it('can be cancelled, leaving the part to resume later', async () => {
    const manager = createDownloadManager({ api, dir, sleep: noSleep });
    const controller = new AbortController();
    const pending = manager.download({
      item: item(),
      signal: controller.signal,
      onProgress: (p) => {
        if (p.received > 0) controller.abort();
      },
    });
    await expect(pending).rejects.toMatchObject({ code: 'canceled' });
  });
});
