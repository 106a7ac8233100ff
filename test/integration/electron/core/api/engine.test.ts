// The client against the REAL service (the Local engine on loopback). A TCP proxy stands in for
// the network where a fault is needed; the service itself is never mocked.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../../../../server/index.ts';
import type { RunningService } from '../../../../../server/index.ts';
import { ManualClock } from '../../../../../shared/clock.ts';
import { ServiceError, createApiClient, newIdempotencyKey } from '../../../../../electron/core/api/index.ts';
import type { ApiClient, Sleep } from '../../../../../electron/core/api/index.ts';
import { createDownloadManager } from '../../../../../electron/core/downloads/index.ts';
import { startFaultProxy } from './fault-proxy.ts';

const VIDEO = { model: 'clipdesk/motion', prompt: 'a red fox in the snow', size: '360p', duration: 2 } as const;

let dataDir: string;
let service: RunningService;
const cleanups: Array<() => Promise<unknown>> = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-'));
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

async function start(
  opts: Parameters<typeof startService>[0] extends infer O ? Partial<O> : never = {},
): Promise<RunningService> {
  const s = await startService({ dataDir, sweepIntervalMs: 0, ...opts });
  cleanups.push(() => s.close());
  return s;
}

function client(
  baseUrl: string,
  key: string | null,
  extra: Partial<Parameters<typeof createApiClient>[0]> = {},
): ApiClient {
  const c = createApiClient({ baseUrl, getKey: () => key, ...extra });
  cleanups.push(() => c.dispose());
  return c;
}

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

describe('typed errors from the real engine', () => {
  it('authentication, permission, invalid_request, not_found, unsupported_parameter, provider_unavailable, network, timeout', async () => {
    service = await start({ failProviders: ['swift', 'studio', 'prism'] });
    const { key } = await service.createKey({ user: 'alice', tier: 'pro' });
    const readOnly = await service.createKey({ user: 'alice', tier: 'pro', permissions: ['read'] });
    const api = client(service.url, key);

    expect(await failure(client(service.url, null).listMedia())).toMatchObject({
      code: 'authentication_error',
      message: 'API key is missing',
    });
    expect(await failure(client(service.url, 'sk-nonsense').listMedia())).toMatchObject({
      code: 'authentication_error',
      message: 'Invalid API key',
    });
    expect(
      await failure(client(service.url, readOnly.key).generateVideo(VIDEO, { idempotencyKey: newIdempotencyKey() })),
    ).toMatchObject({ code: 'permission_error', message: 'API key does not have permission to access this resource' });
    expect(
      (await failure(api.generateVideo({ ...VIDEO, size: '9999p' }, { idempotencyKey: newIdempotencyKey() }))).code,
    ).toBe('invalid_request_error');
    expect(await failure(api.getModel('nope/nope'))).toMatchObject({ code: 'not_found_error', status: 404 });
    expect(
      await failure(
        api.generateVideo({ ...VIDEO, style: 'noir', routing: 'compatible' }, { idempotencyKey: newIdempotencyKey() }),
      ),
    ).toMatchObject({ code: 'unsupported_parameter', status: 422 });
    const down = await failure(api.generateVideo(VIDEO, { idempotencyKey: newIdempotencyKey() }));
    expect(down).toMatchObject({ code: 'provider_unavailable', status: 503 });
    expect(down.message.length).toBeGreaterThan(0);
    expect((await failure(api.generateVideo(VIDEO, { idempotencyKey: newIdempotencyKey(), timeoutMs: 1 }))).code).toBe(
      'timeout',
    );

    const closed = await start({ dataDir: join(dataDir, 'closed') });
    const url = closed.url;
    await closed.close();
    const offline = client(url, key, { sleep: () => Promise.resolve() });
    expect((await failure(offline.listMedia())).code).toBe('network_error');
  });

  it('rate_limit: a 429 makes the client wait retry_after and then succeed', async () => {
    const clock = new ManualClock(Date.now());
    service = await start({ clock });
    const { key } = await service.createKey({ user: 'bob', tier: 'free' });
    const sleeps: number[] = [];
    const sleep: Sleep = (ms) => {
      sleeps.push(ms);
      clock.advance(ms);
      return Promise.resolve();
    };
    // Spend the free tier's 10 requests a minute with one client…
    const first = client(service.url, key, { clock, sleep, random: () => 0 });
    for (let i = 0; i < 10; i++) await first.listModels();
    expect(first.rateLimit.remaining).toBe(0);
    // …then a second client, which has not seen the headers, is answered 429 and waits.
    const second = client(service.url, key, { clock, sleep, random: () => 0 });
    const raw = createApiClient({
      baseUrl: service.url,
      getKey: () => key,
      clock,
      sleep,
      retry: { maxRateLimitRetries: 0 },
    });
    cleanups.push(() => raw.dispose());
    const refused = await failure(raw.listModels());
    expect(refused.code).toBe('rate_limit_exceeded');
    expect(refused.retryAfter).toBeGreaterThan(0);
    sleeps.length = 0;
    await expect(second.listModels()).resolves.toMatchObject({ total: expect.any(Number) });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(refused.retryAfter! * 1000 - 1000);
    // And the first client, which knows the window is spent, waits for the reset instead of sending.
    for (let i = 0; i < 8; i++) await first.listModels();
    expect(first.rateLimit.limit).toBe(10);
  });

  it('polling a generation is never held back by a spent rate window: the service does not count it', async () => {
    const clock = new ManualClock(Date.now());
    service = await start({ clock });
    const { key } = await service.createKey({ user: 'carol', tier: 'free' });
    const waits: string[] = [];
    const sleep: Sleep = (ms) => {
      clock.advance(ms);
      return Promise.resolve();
    };
    const api = client(service.url, key, { clock, sleep, random: () => 0 });
    const start0 = await api.submitGeneration('videos.generations', VIDEO, { idempotencyKey: newIdempotencyKey() });
    if (!start0.async) throw new Error('the Local engine answers asynchronously');
    // The rest of the free tier's 10 requests of this minute, spent by other calls (the app's lists).
    while ((api.rateLimit.remaining ?? 1) > 0) await api.listModels();
    const onWait = (w: { reason: string; what: string }) => waits.push(`${w.reason} ${w.what}`);
    const final = await api.waitForGeneration(start0.generation.id, { onWait });
    expect(final.status).toBe('succeeded');
    expect(waits).toEqual([]);
    // Its file downloads at once too, in a window spent again (the polls' waits moved the clock on):
    // the download of one's own item is not counted either.
    do await api.listModels();
    while ((api.rateLimit.remaining ?? 1) > 0);
    const item = final.data?.[0];
    if (!item) throw new Error('the generation has no item');
    const content = await api.openMediaContent(item.id, { onWait });
    expect(content.status).toBe(200);
    await content.body.dump();
    // Not one rate-limit wait, and the window is still the one the lists spent.
    expect(waits).toEqual([]);
    expect(api.rateLimit.remaining).toBe(0);
  });
});

describe('faults on the way to the real engine', () => {
  it('a generation retried after a dropped connection is not charged twice', async () => {
    service = await start();
    const { key } = await service.createKey({ user: 'carol', tier: 'pro' });
    const proxy = await startFaultProxy(service.port);
    cleanups.push(() => proxy.close());
    let dropped = 0;
    proxy.faults.push({ match: 'POST /v1/videos/generations', dropClientAfterRequest: true, onCut: () => dropped++ });
    const api = client(`${proxy.origin}/v1`, key, {
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200))),
    });
    const res = await api.generateVideo(VIDEO, { idempotencyKey: newIdempotencyKey() });
    expect(dropped).toBe(1);
    const direct = client(service.url, key);
    const usage = await direct.getUsage();
    expect(usage.usage?.cost?.total).toBeCloseTo(res.price, 6);
    const listed = await direct.listMedia({ user: 'me' });
    expect(listed.total).toBe(1);
    expect(listed.medias[0]!.id).toBe(res.data[0]!.id);
  });

  it('a server killed mid-download resumes to an identical file', async () => {
    service = await start();
    const { key } = await service.createKey({ user: 'dave', tier: 'pro' });
    const api0 = client(service.url, key);
    const gen = await api0.generateVideo(VIDEO, { idempotencyKey: newIdempotencyKey() });
    const item = gen.data[0]!;
    const reference = await api0.fetch(item.url);
    const expected = createHash('sha256')
      .update(Buffer.from(await reference.body.arrayBuffer()))
      .digest('hex');

    const proxy = await startFaultProxy(service.port);
    cleanups.push(() => proxy.close());
    let killed = false;
    proxy.faults.push({ match: `/content`, cutAfterResponseBytes: 40_000, onCut: () => (killed = true) });
    const api = client(`${proxy.origin}/v1`, key);
    const out = await mkdtemp(join(tmpdir(), 'clipdesk-resume-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    const manager = createDownloadManager({
      api,
      dir: out,
      // Between attempts: the service is really stopped and started again on the same data.
      sleep: async () => {
        await service.close();
        service = await start();
        proxy.targetPort = service.port;
      },
    });
    const res = await manager.download({ item });
    expect(killed).toBe(true);
    expect(res.resumes).toBe(1);
    expect(res.source).toBe('content');
    expect(res.sha256).toBe(expected);
    expect(
      createHash('sha256')
        .update(await readFile(res.path))
        .digest('hex'),
    ).toBe(expected);
    expect(JSON.parse(await readFile(res.sidecarPath, 'utf8'))).toMatchObject({
      id: item.id,
      sha256: expected,
      prompt: VIDEO.prompt,
    });
  });

  it('the key never reaches a foreign origin', async () => {
    service = await start();
    const { key } = await service.createKey({ user: 'erin', tier: 'pro' });
    const api = client(service.url, key);
    const gen = await api.generateVideo(VIDEO, { idempotencyKey: newIdempotencyKey() });
    const bytes = Buffer.from(await (await api.fetch(gen.data[0]!.url)).body.arrayBuffer());

    const seen: IncomingHttpHeaders[] = [];
    const foreign = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length }).end(bytes);
    });
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => foreign.close(r)));
    const foreignOrigin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;

    // An item from elsewhere: the engine has no such id, so the manager falls back to its URL.
    const out = await mkdtemp(join(tmpdir(), 'clipdesk-foreign-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    const stranger = { ...gen.data[0]!, id: 'med_elsewhere', url: `${foreignOrigin}/cdn/clip.mp4`, formats: [] };
    const res = await createDownloadManager({ api, dir: out }).download({ item: stranger });
    expect(res.source).toBe('url');
    await (await api.fetch(`${foreignOrigin}/direct.mp4`)).body.dump();

    expect(seen).toHaveLength(2);
    for (const h of seen) {
      expect(h.authorization).toBeUndefined();
      expect(JSON.stringify(h)).not.toContain(key);
    }
  });
});
