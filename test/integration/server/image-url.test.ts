import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchImage, MAX_REDIRECTS } from '../../../server/net/fetch-image.ts';
import type { HostLookup } from '../../../server/net/host-lookup.ts';
import { makePng, single, SMALL_VIDEO, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/** Host names the tests resolve themselves; anything else is not found. */
const NAMES: Record<string, string> = {
  localhost: '::1',
  'images.example.com': '127.0.0.1',
  'internal.example.com': '10.0.0.5',
  'metadata.example.com': '169.254.169.254',
};
const lookup: HostLookup = (hostname) => {
  const address = NAMES[hostname];
  return address
    ? Promise.resolve([{ address, family: 4 }])
    : Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
};

let t: TestService;
let c: TestClient;
let work: string;
let web: Server;
let port = 0;
let webUrl = '';
let png: Buffer;

beforeAll(async () => {
  t = await startTestService({ imageUrlLookup: lookup });
  c = await t.client('ssrf-user', 'pro');
  work = await mkdtemp(join(tmpdir(), 'clipdesk-imgurl-'));
  png = await readFile(await makePng(work, 'web.png', '64x48', 'navy'));
  // "The web": a picture, and redirects to wherever the test says.
  web = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/start.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (url.pathname === '/redirect') res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    else if (url.pathname === '/loop') {
      const n = Number(url.searchParams.get('n'));
      res.writeHead(302, { location: n > 0 ? `/loop?n=${n - 1}` : '/start.png' }).end();
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  port = (web.address() as AddressInfo).port;
  webUrl = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await new Promise((r) => web.close(r));
  await t.stop();
  await rm(work, { recursive: true, force: true });
});

async function withImage(image_url: string) {
  return c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'pan', image_url, routing: 'compatible' });
}

describe('image_url is fetched only from public addresses', () => {
  it.each([
    ['a loopback address', () => `${webUrl}/start.png`],
    ['localhost', () => `http://localhost:${port}/start.png`],
    ['an IPv6 loopback', () => `http://[::1]:${port}/start.png`],
    ['an IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port}/start.png`],
    ['0.0.0.0', () => `http://0.0.0.0:${port}/start.png`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', () => 'http://192.168.1.1/camera.jpg'],
    ['a public-looking name that resolves to 127.0.0.1', () => `http://images.example.com:${port}/start.png`],
    ['a name that resolves to a private address', () => 'http://internal.example.com/a.png'],
  ])('refuses %s with a clear 400', async (_name, url) => {
    const res = await withImage(url());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'invalid_request_error' });
    expect(res.body.message).toMatch(/must be a public address/);
    expect(res.body.message).toMatch(/--allow-private-image-urls/);
  });

  it('still resolves its own upload and item URLs, by id, without fetching them', async () => {
    const tk = await c.call('POST', '/media/upload', { filename: 'own.png', mime: 'image/png', size: png.length });
    const { id, uploadUrl } = tk.body.result as { id: string; uploadUrl: string };
    expect((await fetch(uploadUrl, { method: 'PUT', body: new Uint8Array(png) })).status).toBe(200);
    const item = single((await c.call('POST', `/media/${id}`)).body);
    for (const url of [item.url, `${t.service.url}/media/${item.id}/content`, uploadUrl]) {
      const res = await withImage(url);
      expect(res.status, url).toBe(200);
    }
    // Another user's private item is not theirs to use, and other paths of ours are not images.
    const other = await t.client('someone-else');
    const theirs = await other.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'x',
      image_url: item.url,
      routing: 'compatible',
    });
    expect(theirs.status).toBe(400);
    expect(theirs.body.message).toMatch(/does not exist or is not yours/);
    const models = await withImage(`${t.service.url}/models`);
    expect(models.status).toBe(400);
    expect(models.body.message).toMatch(/not at a media item/);
  });
});

describe('--allow-private-image-urls', () => {
  it('lets a loopback image host through', async () => {
    const open = await startTestService({ allowPrivateImageUrls: true });
    try {
      const oc = await open.client('operator');
      const res = await oc.call('POST', '/videos/generations', {
        ...SMALL_VIDEO,
        prompt: 'pan across navy',
        image_url: `${webUrl}/start.png`,
        routing: 'compatible',
      });
      expect(res.status).toBe(200);
    } finally {
      await open.stop();
    }
  });
});

describe('redirects', () => {
  // 127.0.0.1 stands in for "a public address" here, so the first hop can be served by this test.
  const onlyThisHost = (address: string) => address === '127.0.0.1';
  const fetchWith = (url: string) =>
    fetchImage(new URL(url), join(work, `dl-${Math.random()}`), {
      signal: AbortSignal.timeout(10_000),
      lookup,
      isAllowed: onlyThisHost,
    });

  it('are followed, each hop checked', async () => {
    await expect(fetchWith(`${webUrl}/redirect?to=/start.png`)).resolves.toContain('dl-');
    await expect(fetchWith(`${webUrl}/loop?n=${MAX_REDIRECTS - 1}`)).resolves.toContain('dl-');
  });

  it.each([
    ['an address literal', 'http://169.254.169.254/latest/meta-data/'],
    ['a name resolving to a private address', 'http://internal.example.com/x.png'],
    ['a name resolving to link-local', 'http://metadata.example.com/x.png'],
    ['an IPv6 loopback', `http://[::1]:1/x.png`],
  ])('to %s are refused', async (_name, to) => {
    await expect(fetchWith(`${webUrl}/redirect?to=${encodeURIComponent(to)}`)).rejects.toThrow(
      /redirects to .* must be a public address/,
    );
  });

  it(`are followed at most ${MAX_REDIRECTS} times`, async () => {
    await expect(fetchWith(`${webUrl}/loop?n=${MAX_REDIRECTS}`)).rejects.toThrow(/more than 5 times/);
  });

  it('to another scheme are refused', async () => {
    await expect(fetchWith(`${webUrl}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`)).rejects.toThrow(
      /not http\(s\)/,
    );
  });
});
