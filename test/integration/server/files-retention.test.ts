import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { listed, makePng, startTestService, single } from './helpers.ts';
import type { Item, TestClient, TestService } from './helpers.ts';

let t: TestService;
let c: TestClient;
let png: Buffer;
beforeAll(async () => {
  t = await startTestService({ retentionSecondsOverride: 5 });
  c = await t.client('keeper', 'pro');
  png = await readFile(await makePng(t.dataDir, 'keep.png', '40x30', 'green'));
});
afterAll(async () => {
  await t.stop();
});

async function uploadItem(name: string): Promise<Item> {
  const tk = (await c.call('POST', '/media/upload', { filename: name, mime: 'image/png', size: png.length })).body
    .result;
  expect((await fetch(String(tk.uploadUrl), { method: 'PUT', body: new Uint8Array(png) })).status).toBe(200);
  const done = await c.call('POST', `/media/${tk.id}`);
  expect(done.status).toBe(200);
  return single(done.body);
}

describe('file serving', () => {
  it('Range gives 206 with Content-Range; past the end is 416; HEAD has no body', async () => {
    const item = await uploadItem('range.png');
    const full = await fetch(item.url);
    expect(full.status).toBe(200);
    expect(full.headers.get('content-type')).toBe('image/png');
    expect(full.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await full.arrayBuffer()).equals(png)).toBe(true);
    const part = await fetch(item.url, { headers: { range: 'bytes=1-3' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1-3/${png.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(png.subarray(1, 4))).toBe(true);
    const tail = await fetch(item.url, { headers: { range: 'bytes=-4' } });
    expect(Buffer.from(await tail.arrayBuffer()).equals(png.subarray(-4))).toBe(true);
    const open = await fetch(item.url, { headers: { range: `bytes=${png.length - 2}-` } });
    expect(open.status).toBe(206);
    expect((await open.arrayBuffer()).byteLength).toBe(2);
    const beyond = await fetch(item.url, { headers: { range: `bytes=${png.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${png.length}`);
    await beyond.arrayBuffer();
    const head = await fetch(item.url, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String(png.length));
  });

  it('a wrong signature, a traversal or an unknown name is 404', async () => {
    const item = await uploadItem('sig.png');
    const url = new URL(item.url);
    const bad = new URL(url);
    // Change the first character to one it is not (a signature starting with 'x' must change too).
    const sig = url.searchParams.get('sig')!;
    bad.searchParams.set('sig', (sig.startsWith('x') ? 'y' : 'x') + sig.slice(1));
    for (const href of [
      bad.href,
      url.href.replace('/image.png', '/..%2F..%2Fsecret.key'),
      url.href.replace('/image.png', '/thumbnail.jpg'),
      url.href.replace(/med_[0-9a-f]+/, '..'),
      `${t.service.url}/files/../secret.key`,
      `${t.service.url}/files/med_000000000000000000000000/image.png`,
    ]) {
      const res = await fetch(href);
      // A `..` the URL resolves away leaves /v1/files/: an unknown path, 401 without a key.
      expect(res.status, href).toBe(new URL(href).pathname.startsWith('/v1/files/') ? 404 : 401);
      await res.arrayBuffer();
    }
  });
});

describe('retention', () => {
  it('deletes items past the deadline unless downloaded or retained', async () => {
    // Start clean: the file-serving tests' items expire first.
    t.clock.advance(6000);
    // range.png was downloaded whole through its url by its owner, so it stays.
    expect(await t.service.sweepRetention()).toBe(1);
    const plain = await uploadItem('plain.png');
    const downloaded = await uploadItem('downloaded.png');
    const retained = await uploadItem('retained.png');
    const extended = await uploadItem('extended.png');
    expect(Date.parse(String(plain.expiresAt))).toBe(t.clock.now() + 5000);

    const dl = await fetch(`${t.service.url}/media/${downloaded.id}/content`, {
      headers: { authorization: `Bearer ${c.key}` },
    });
    expect(dl.status).toBe(200);
    await dl.arrayBuffer();
    const keep = await c.call('POST', `/media/${retained.id}/retain`, { forever: true });
    expect(single(keep.body).expiresAt).toBeNull();
    const more = await c.call('POST', `/media/${extended.id}/retain`, { days: 1 });
    expect(Date.parse(String(single(more.body).expiresAt))).toBe(Date.parse(String(extended.expiresAt)) + 86_400_000);
    expect((await c.call('POST', `/media/${plain.id}/retain`, {})).status).toBe(400);
    const stranger = await t.client('stranger');
    expect((await stranger.call('POST', `/media/${plain.id}/retain`, { days: 1 })).status).toBe(404);

    expect(await t.service.sweepRetention()).toBe(0);
    t.clock.advance(6000);
    expect(await t.service.sweepRetention()).toBe(1);

    const ids = listed((await c.call('GET', '/media?user=me&limit=100')).body).map((m) => m.id);
    expect(ids).not.toContain(plain.id);
    expect(ids).toEqual(expect.arrayContaining([downloaded.id, retained.id, extended.id]));
    expect((await fetch(plain.url)).status).toBe(404);
    expect((await t.storedKeys('media/')).filter((k) => k.startsWith(`media/${plain.id}/`))).toEqual([]);
    expect((await c.call('GET', `/media/${plain.id}`)).status).toBe(404);

    t.clock.advance(2 * 86_400_000);
    expect(await t.service.sweepRetention()).toBe(1);
    const left = listed((await c.call('GET', '/media?user=me&limit=100')).body).map((m) => m.id);
    expect(left).toEqual(expect.arrayContaining([downloaded.id, retained.id]));
    expect(left).not.toContain(extended.id);
  });
});
