import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GenerationResponse, MediaListResponse } from '../../../shared/api/index.ts';
import { probe } from '../../../shared/node/ffmpeg.ts';
import { until } from '../../support/until.ts';
import { generated, listed, makePng, SMALL_VIDEO, startTestService, single } from './helpers.ts';
import type { Item, TestClient, TestService } from './helpers.ts';

let t: TestService;
let c: TestClient;
let images: Server;
let imagesUrl = '';

beforeAll(async () => {
  // The stand-in web server below is on loopback.
  t = await startTestService({ allowPrivateImageUrls: true });
  c = await t.client('gen-user', 'pro');
  const png = await readFile(await makePng(t.dataDir, 'served.png', '96x64', 'teal'));
  // A stand-in for "somewhere on the web" serving a start image, a page and a 404.
  images = createServer((req, res) => {
    if (req.url === '/start.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (req.url === '/page.html')
      res.writeHead(200, { 'content-type': 'image/png' }).end('<html>not an image</html>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
  imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => images.close(r));
  await t.stop();
});

async function download(url: string, path: string): Promise<void> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  await writeFile(path, Buffer.from(await res.arrayBuffer()));
}

describe('POST /videos/generations', () => {
  let item: Item;

  it('generates, transcodes to MP4/H.264 and WebM/VP9, makes a thumbnail, stores, and answers the envelope', async () => {
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'a lighthouse at dusk, waves',
      public: false,
    });
    expect(res.status).toBe(200);
    const parsed = GenerationResponse.parse(res.body);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toHaveLength(1);
    item = generated(res.body)[0]!;
    expect(item).not.toHaveProperty('modelSlug');
    expect(item).not.toHaveProperty('providerName');
    expect(item).toMatchObject({
      media: 'video',
      mime: 'video/mp4',
      user: 'gen-user',
      model: 'clipdesk/motion',
      size: '360p',
      public: false,
    });
    for (const k of ['setupTime', 'processingTime', 'generationTime'] as const)
      expect(parsed.stats[k]).toBeGreaterThanOrEqual(0);
    expect(parsed.stats.retries).toBe(0);
    expect(parsed.stats.providerId).toBe(item.provider);
    expect(parsed.price).toBeCloseTo(0.01 * 2, 6);

    const dir = t.dataDir;
    await download(item.formats[0]!.url, join(dir, 'got.mp4'));
    await download(item.formats[1]!.url, join(dir, 'got.webm'));
    await download(item.thumbnailUrl, join(dir, 'got.jpg'));
    const mp4 = await probe(join(dir, 'got.mp4'));
    expect(mp4).toMatchObject({ videoCodec: 'h264', width: 640, height: 360 });
    expect(mp4.durationSeconds).toBeGreaterThan(1.8);
    expect(mp4.durationSeconds).toBeLessThan(2.3);
    const webm = await probe(join(dir, 'got.webm'));
    expect(webm).toMatchObject({ videoCodec: 'vp9', width: 640, height: 360 });
    expect(webm.formatName).toContain('webm');
    const thumb = await probe(join(dir, 'got.jpg'));
    expect(thumb.width).toBeGreaterThan(0);
    expect(item.formats.map((f) => f.mime)).toEqual(['video/mp4', 'video/webm']);
  });

  it('the item is listed with modelSlug and providerName; the file is served with its type and cache headers', async () => {
    const list = await c.call('GET', '/media?user=me');
    const parsed = MediaListResponse.parse(list.body);
    const listed = parsed.result.medias.find((m) => m.id === item.id)!;
    expect(listed.modelSlug).toBe('clipdesk/motion:1.1');
    expect(listed.providerName).toMatch(/Local/);
    const file = await fetch(item.url);
    expect(file.headers.get('content-type')).toBe('video/mp4');
    // A private item's URL may be cached only while it works (at most the 24 h TTL and one step).
    const maxAge = Number(/^private, max-age=(\d+), immutable$/.exec(file.headers.get('cache-control') ?? '')?.[1]);
    expect(maxAge).toBeGreaterThanOrEqual(86_400);
    expect(maxAge).toBeLessThanOrEqual(86_400 + 3_600);
    await file.arrayBuffer();
  });

  it('the authenticated download marks the item downloaded (exempt from retention)', async () => {
    const res = await fetch(`${t.service.url}/media/${item.id}/content?format=webm`, {
      headers: { authorization: `Bearer ${c.key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('video/webm');
    // Downloading one's own item is not counted against the rate limits (docs/api.md, "What counts
    // against the rate limits"), so it carries no rate-limit headers.
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    await res.arrayBuffer();
    const after = await c.call('GET', `/media/${item.id}`);
    expect(single(after.body).downloadedAt).not.toBeNull();
    expect(single(after.body).expiresAt).toBeNull();
  });

  it('the same request gives the same frames (seed from the prompt)', async () => {
    const again = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'a lighthouse at dusk, waves',
      public: false,
    });
    expect(again.status).toBe(200);
    const a = await fetch(item.thumbnailUrl).then((r) => r.arrayBuffer());
    const b = await fetch(generated(again.body)[0]!.thumbnailUrl).then((r) => r.arrayBuffer());
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  it('Idempotency-Key: a repeat returns the first result and is charged once', async () => {
    const before = (await c.call('GET', '/usage')).body.result.usage.cost.total as number;
    const body = { ...SMALL_VIDEO, prompt: 'idempotent orbit' };
    const headers = { 'idempotency-key': 'gen-once-1' };
    const [first, second] = await Promise.all([
      c.call('POST', '/videos/generations', body, headers),
      c.call('POST', '/videos/generations', body, headers),
    ]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.data[0].id).toBe(first.body.data[0].id);
    const third = await c.call('POST', '/videos/generations', body, headers);
    expect(third.body.data[0].id).toBe(first.body.data[0].id);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    const after = (await c.call('GET', '/usage')).body.result.usage.cost.total as number;
    expect(after - before).toBeCloseTo(first.body.price as number, 6);
    const listed = await c.call('GET', '/media?search=idempotent%20orbit');
    expect(listed.body.result.total).toBe(1);
    const reused = await c.call('POST', '/videos/generations', { ...body, prompt: 'another' }, headers);
    expect(reused.status).toBe(400);
    expect(reused.body.code).toBe('invalid_request_error');
  });

  it('a client that disconnects mid-generation has canceled: the render stops, nothing is stored or charged', async () => {
    const costBefore = (await c.call('GET', '/usage')).body.result.usage.cost.total as number;
    const aborter = new AbortController();
    const pending = fetch(`${t.service.url}/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...SMALL_VIDEO, prompt: 'the client walked away' }),
      signal: aborter.signal,
    }).catch((e: unknown) => e);
    for (let i = 0; i < 500 && t.service.stats.running('gen-user', 'video') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    aborter.abort();
    await pending;
    // docs/workflows.md: a synchronous request's client is its only taker (asynchronous mode outlives it).
    for (let i = 0; i < 3000 && t.service.stats.running('gen-user', 'video') > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    const total = (await c.call('GET', '/media?search=walked%20away')).body.result.total as number;
    expect(total).toBe(0);
    expect((await c.call('GET', '/usage')).body.result.usage.cost.total).toBe(costBefore);
  });

  it('animates a start image fetched from image_url', async () => {
    const res = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'pan across the teal card',
      image_url: `${imagesUrl}/start.png`,
      routing: 'compatible',
    });
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('studio');
    expect(res.body.stats.ignoredParameters).toEqual([]);
  });

  it('leaves no work files behind', async () => {
    // A generation frees its slot before it removes its work directory (generate.ts), so the one
    // canceled above may still be removing it.
    const tmp = join(t.dataDir, 'tmp');
    await until('tmp/ emptied', async () => ((await readdir(tmp)).length === 0 ? true : undefined), 5_000).catch(
      () => undefined,
    );
    expect(await readdir(tmp)).toEqual([]);
  });
});

describe('bad input gets the documented error and stores nothing', () => {
  const cases: Array<[string, unknown, number, string]> = [
    ['prompt over 500 characters', { ...SMALL_VIDEO, prompt: 'x'.repeat(501) }, 400, 'invalid_request_error'],
    ['missing prompt', { model: 'clipdesk/motion' }, 400, 'invalid_request_error'],
    ['missing model', { prompt: 'x' }, 400, 'invalid_request_error'],
    ['prompt of the wrong type', { ...SMALL_VIDEO, prompt: 42 }, 400, 'invalid_request_error'],
    ['duration of the wrong type', { ...SMALL_VIDEO, prompt: 'x', duration: '2' }, 400, 'invalid_request_error'],
    ['duration below the model range', { ...SMALL_VIDEO, prompt: 'x', duration: 1 }, 400, 'invalid_request_error'],
    ['duration above the model range', { ...SMALL_VIDEO, prompt: 'x', duration: 9 }, 400, 'invalid_request_error'],
    ['size not offered', { ...SMALL_VIDEO, prompt: 'x', size: '4k' }, 400, 'invalid_request_error'],
    ['unknown model', { ...SMALL_VIDEO, model: 'acme/nothing', prompt: 'x' }, 404, 'not_found_error'],
    ['unknown model version', { ...SMALL_VIDEO, model: 'clipdesk/motion:9.9', prompt: 'x' }, 404, 'not_found_error'],
    ['image model on the video endpoint', { model: 'clipdesk/still', prompt: 'x' }, 400, 'invalid_request_error'],
    ['unknown provider', { ...SMALL_VIDEO, prompt: 'x', provider: 'nobody' }, 404, 'not_found_error'],
    ['style on a model without styles', { ...SMALL_VIDEO, prompt: 'x', style: 'noir' }, 422, 'unsupported_parameter'],
    ['unknown routing mode', { ...SMALL_VIDEO, prompt: 'x', routing: 'fastest' }, 400, 'invalid_request_error'],
    [
      'image_url that is not a URL',
      { ...SMALL_VIDEO, prompt: 'x', image_url: 'not a url' },
      400,
      'invalid_request_error',
    ],
    [
      'image_url with a file: scheme',
      { ...SMALL_VIDEO, prompt: 'x', image_url: 'file:///etc/passwd' },
      400,
      'invalid_request_error',
    ],
    ['a JSON array', [1, 2], 400, 'invalid_request_error'],
  ];
  it.each(cases)('%s', async (_name, body, status, code) => {
    const res = await c.call('POST', '/videos/generations', body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ success: false, code });
    expect(typeof res.body.message).toBe('string');
  });

  it('image_url that is unreachable, or not an image', async () => {
    const missing = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'x',
      image_url: `${imagesUrl}/gone.png`,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/not reachable/);
    const page = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'x',
      image_url: `${imagesUrl}/page.html`,
    });
    expect(page.status).toBe(400);
    expect(page.body.message).toMatch(/not an image/);
  });

  it('malformed JSON, an empty body, and a non-JSON content type', async () => {
    expect((await c.call('POST', '/videos/generations', '{"model": ')).body.code).toBe('invalid_request_error');
    expect((await c.call('POST', '/videos/generations', '')).status).toBe(400);
    const res = await c.call('POST', '/videos/generations', 'model=x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(415);
  });

  it('an oversized body is refused with 413 before it is read', async () => {
    const res = await c.call(
      'POST',
      '/videos/generations',
      JSON.stringify({ ...SMALL_VIDEO, prompt: 'x', pad: 'y'.repeat(200_000) }),
    );
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('nothing was stored by the refused requests', async () => {
    const list = await c.call('GET', '/media?search=x&limit=100');
    expect(listed(list.body).filter((m) => m.prompt === 'x')).toEqual([]);
  });
});
