// The download manager against the REAL engine when an item's signed URL has expired (defect 12).
// A small HTTP proxy in front of the engine plays a service without the `/media/:id/content`
// extension, so the manager downloads the item's own URL; the engine itself is not mocked.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startService } from '../../../../../server/index.ts';
import type { RunningService } from '../../../../../server/index.ts';
import { ManualClock } from '../../../../../shared/clock.ts';
import { createApiClient, newIdempotencyKey } from '../../../../../electron/core/api/index.ts';
import type { ApiClient } from '../../../../../electron/core/api/index.ts';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';

const cleanups: Array<() => Promise<unknown>> = [];
let dir: string;
let clock: ManualClock;
let service: RunningService;
let api: ApiClient;
let key: string;

/** Forwards everything to the engine except `/content`, which it answers 404 like an older service. */
async function withoutContentEndpoint(port: number): Promise<string> {
  const proxy = createServer((req, res) => {
    if ((req.url ?? '').includes('/content')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, message: 'no endpoint', code: 'not_found_error' }));
      req.resume();
      return;
    }
    const upstream = request(
      { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        pipeline(answer, res).catch(() => res.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    pipeline(req, upstream).catch(() => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-expired-'));
  clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  service = await startService({ dataDir: join(dir, 'engine'), clock, sweepIntervalMs: 0, fileUrlTtlSeconds: 60 });
  cleanups.push(() => service.close());
  key = (await service.createKey({ user: 'erin', tier: 'pro' })).key;
  api = createApiClient({ baseUrl: await withoutContentEndpoint(service.port), getKey: () => key });
  cleanups.push(() => api.dispose());
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

describe('downloading an item whose signed URL has expired', () => {
  it('fetches the item again, retries with the fresh URL, and the whole download counts for retention', async () => {
    const gen = await api.generateImage(
      { model: 'clipdesk/still', prompt: 'a harbour at night', size: '256x256', public: false },
      { idempotencyKey: newIdempotencyKey() },
    );
    const item = gen.data[0]!;
    clock.advance(2 * 3_600_000);
    expect((await api.fetch(item.url)).status).toBe(403);

    const manager = createDownloadManager({ api, dir: join(dir, 'downloads'), sleep: () => Promise.resolve() });
    const res = await manager.download({ item });
    expect(res.source).toBe('url');
    expect(res.bytes).toBe(item.formats?.[0]?.bytes);
    expect((await readFile(res.path)).subarray(1, 4).toString()).toBe('PNG');
    const sidecar = JSON.parse(await readFile(res.sidecarPath, 'utf8')) as { url: string };
    expect(sidecar.url).not.toBe(item.url);

    const after = await api.getMedia(item.id);
    expect(after.downloadedAt).not.toBeNull();
    expect(after.expiresAt).toBeNull();
  });

  it('an item the service deleted meanwhile is reported not found', async () => {
    const gen = await api.generateImage(
      { model: 'clipdesk/still', prompt: 'a lantern', size: '256x256', public: false },
      { idempotencyKey: newIdempotencyKey() },
    );
    const item = gen.data[0]!;
    clock.advance(91 * 86_400_000);
    await service.sweepRetention();
    const manager = createDownloadManager({ api, dir: join(dir, 'downloads'), sleep: () => Promise.resolve() });
    await expect(manager.download({ item })).rejects.toMatchObject({ code: 'not_found_error' });
  });
});
