import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { runFfmpeg } from '../../../../../shared/node/ffmpeg.ts';
import { createApiClient } from '../../../../../electron/core/api/index.ts';
import type { ApiClient, WaitNotice } from '../../../../../electron/core/api/index.ts';
import { RetryBudget } from '../../../../../electron/core/api/retry.ts';
import { createFileDedupStore, createUploader } from '../../../../../electron/core/uploads/index.ts';

let dir: string;
let png: string;
let bigPng: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-up-'));
  png = join(dir, 'frame.png');
  bigPng = join(dir, 'big.png');
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'testsrc=size=64x48', '-frames:v', '1', png]);
  await runFfmpeg(['-y', '-f', 'lavfi', '-i', 'testsrc=size=800x600', '-frames:v', '1', bigPng]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Scripted PUT answers: 'ok' | 'reset' | 'expired'. */
let putPlan: string[];
let tickets: number;
let puts: Array<{ bytes: number; auth: string | undefined; url: string }>;
let completed: string[];
/** Items the fake service has deleted since they were uploaded (retention). */
let deleted: Set<string>;
let server: Server;
let api: ApiClient;

beforeEach(async () => {
  putPlan = [];
  tickets = 0;
  puts = [];
  completed = [];
  deleted = new Set();
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const origin = `http://${req.headers.host}`;
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && req.url === '/v1/media/upload') {
        const n = ++tickets;
        send(200, {
          success: true,
          data: {
            id: `up_${n}`,
            uploadUrl: `${origin}/put/up_${n}?sig=x`,
            method: 'PUT',
            headers: {},
            expiresAt: new Date(Date.now() + 60_000).toISOString(),
          },
        });
      } else if (req.method === 'PUT') {
        const plan = putPlan.shift() ?? 'ok';
        puts.push({ bytes: Buffer.concat(chunks).length, auth: req.headers.authorization, url: req.url ?? '' });
        if (plan === 'reset') req.socket.destroy();
        else if (plan === 'expired')
          send(403, { success: false, message: 'The upload URL has expired', code: 'permission_error' });
        else send(200, { success: true });
      } else if (req.url?.startsWith('/v1/media/up_')) {
        const id = req.url.slice('/v1/media/'.length);
        if (req.method === 'POST') completed.push(id);
        else if (!completed.includes(id) || deleted.has(id))
          return send(404, { success: false, message: 'no such item', code: 'not_found_error' });
        send(200, {
          success: true,
          data: [
            {
              id,
              url: `${origin}/files/${id}.png`,
              mime: 'image/png',
              user: 'u',
              media: 'image',
              model: '',
              provider: '',
              prompt: '',
              size: '',
              duration: 0,
              createdAt: new Date().toISOString(),
              modelSlug: '',
              providerName: '',
            },
          ],
        });
      } else send(404, { success: false, message: 'no', code: 'not_found_error' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  api = createApiClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    getKey: () => 'sk-upload',
  });
});
afterEach(async () => {
  await api.dispose();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const noSleep = (): Promise<void> => Promise.resolve();

describe('upload pipeline', () => {
  it('checks, streams the PUT without the key, completes, and reports progress', async () => {
    const uploader = createUploader({ api, sleep: noSleep });
    const phases = new Set<string>();
    let lastSent = 0;
    const res = await uploader.upload(
      { path: png },
      { onProgress: (p) => (phases.add(p.phase), p.phase === 'uploading' && (lastSent = p.sent)) },
    );
    const size = (await readFile(png)).length;
    expect(res).toMatchObject({ mime: 'image/png', width: 64, height: 48, bytes: size, deduplicated: false });
    expect(res.url).toMatch(/\/files\/up_1\.png$/);
    expect(puts).toEqual([{ bytes: size, auth: undefined, url: '/put/up_1?sig=x' }]);
    expect(lastSent).toBe(size);
    expect([...phases]).toEqual(['checking', 'hashing', 'uploading', 'completing', 'done']);
  });

  it('retries a PUT whose connection dropped, and renews an expired URL', async () => {
    putPlan = ['reset', 'expired', 'ok'];
    const uploader = createUploader({ api, sleep: noSleep });
    const res = await uploader.upload({ path: png });
    expect(puts).toHaveLength(3);
    expect(tickets).toBe(2);
    expect(completed).toEqual(['up_2']);
    expect(res.item.id).toBe('up_2');
  });

  it("a PUT's retries wait within the budget it is given, and say each wait first", async () => {
    putPlan = ['reset', 'reset', 'reset', 'reset'];
    const slept: number[] = [];
    const sleep = (ms: number): Promise<void> => {
      slept.push(ms);
      return Promise.resolve();
    };
    const uploader = createUploader({ api, sleep, random: () => 1, maxPutAttempts: 10 });
    const notices: WaitNotice[] = [];
    const budget = new RetryBudget(600);
    await expect(
      uploader.upload({ path: png }, { retryBudget: budget, onWait: (n) => notices.push(n) }),
    ).rejects.toMatchObject({ code: 'network_error' });
    // 250 ms fits in the 600 ms budget, the next backoff (500) does not: two PUTs, one wait.
    expect(puts).toHaveLength(2);
    expect(slept).toEqual([250]);
    expect(budget.spentMs).toBe(250);
    expect(notices).toEqual([
      { reason: 'retry', ms: 250, what: 'the upload of frame.png', message: expect.any(String) as string },
    ]);
  });

  it('reuses an earlier upload of the same bytes to the same service (also across restarts)', async () => {
    const file = join(dir, 'dedup.json');
    const first = await createUploader({ api, dedup: createFileDedupStore(file) }).upload({ path: png });
    const again = await createUploader({ api, dedup: createFileDedupStore(file) }).upload({
      buffer: await readFile(png),
      filename: 'copy.png',
    });
    expect(again.deduplicated).toBe(true);
    expect(again.item.id).toBe(first.item.id);
    expect(puts).toHaveLength(1);
  });

  it('a reused upload carries the URL the service gives it now, and one the service deleted is sent again', async () => {
    const file = join(dir, 'dedup-refresh.json');
    const first = await createUploader({ api, dedup: createFileDedupStore(file) }).upload({ path: png });
    // The same service on another port (the embedded engine's next run), under a stable key.
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, { url: string }>>;
    const entry = Object.values(stored[api.baseUrl]!)[0]!;
    entry.url = 'http://127.0.0.1:1/files/stale.png';
    await writeFile(file, JSON.stringify({ 'local-engine:x': stored[api.baseUrl] }));
    const uploader = createUploader({ api, dedup: createFileDedupStore(file), serviceKey: 'local-engine:x' });
    const again = await uploader.upload({ path: png });
    expect(again).toMatchObject({ deduplicated: true, url: first.url });
    expect(puts).toHaveLength(1);

    deleted.add(first.item.id);
    const fresh = await uploader.upload({ path: png });
    expect(fresh.deduplicated).toBe(false);
    expect(fresh.item.id).not.toBe(first.item.id);
    expect(puts).toHaveLength(2);
  });

  it('hashes a large video while it streams, and finds a repeat of the same file before sending', async () => {
    // Over the 20 MB hash-first threshold: a real MP4 padded with a top-level `free` box.
    const clip = join(dir, 'clip.mp4');
    const big = join(dir, 'big.mp4');
    await runFfmpeg([
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=64x48:duration=1',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      clip,
    ]);
    const padding = 21_000_000;
    const free = Buffer.alloc(padding);
    free.writeUInt32BE(padding, 0);
    free.write('free', 4, 'latin1');
    await writeFile(big, Buffer.concat([await readFile(clip), free]));
    const expected = createHash('sha256')
      .update(await readFile(big))
      .digest('hex');

    const uploader = createUploader({ api, sleep: noSleep });
    const phases = new Set<string>();
    const first = await uploader.upload({ path: big }, { onProgress: (p) => phases.add(p.phase) });
    expect(first.sha256).toBe(expected);
    expect(phases.has('hashing')).toBe(false);
    expect(puts).toHaveLength(1);
    const again = await uploader.upload({ path: big });
    expect(again).toMatchObject({ deduplicated: true, sha256: expected });
    expect(puts).toHaveLength(1);
  });

  it('refuses files that are not what they claim, before contacting the service', async () => {
    const fake = join(dir, 'fake.png');
    await writeFile(fake, 'just text, not a picture');
    await expect(createUploader({ api }).upload({ path: fake })).rejects.toMatchObject({
      code: 'unsupported_media_type',
    });
    await expect(createUploader({ api }).upload({ path: join(dir, 'missing.png') })).rejects.toMatchObject({
      code: 'invalid_request_error',
    });
    expect(tickets).toBe(0);
  });

  it('downsizes an image over the limit with ffmpeg when asked', async () => {
    const res = await createUploader({ api }).upload({ path: bigPng }, { downsize: { maxWidth: 400, maxHeight: 400 } });
    expect(res).toMatchObject({ resized: true, width: 400, height: 300, mime: 'image/png' });
  });

  it('can be cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(createUploader({ api }).upload({ path: png }, { signal: controller.signal })).rejects.toMatchObject({
      code: 'canceled',
    });
  });
});
