import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { until } from '../../support/until.ts';
import { generated, listed, makePng, single, startTestService } from './helpers.ts';
import type { Item, TestClient, TestService } from './helpers.ts';

/** Defect 12 (signed file URLs of private media never expired) and the retention rule for `url` downloads. */
const TTL = 3_600;

let t: TestService;
let owner: TestClient;
let other: TestClient;
let png: Buffer;
beforeAll(async () => {
  t = await startTestService({ fileUrlTtlSeconds: TTL });
  owner = await t.client('url-owner', 'pro');
  other = await t.client('url-other', 'pro');
  png = await readFile(await makePng(t.dataDir, 'url.png', '40x30', 'teal'));
});
afterAll(async () => {
  await t.stop();
});

/** An upload: a private item. */
async function privateItem(name: string): Promise<Item> {
  const tk = (await owner.call('POST', '/media/upload', { filename: name, mime: 'image/png', size: png.length })).body
    .result;
  expect((await fetch(String(tk.uploadUrl), { method: 'PUT', body: new Uint8Array(png) })).status).toBe(200);
  return single((await owner.call('POST', `/media/${tk.id}`)).body);
}

/** A small generated image: public by default. */
async function publicItem(prompt: string): Promise<Item> {
  const res = await owner.call('POST', '/images/generations', { model: 'clipdesk/still', prompt, size: '256x256' });
  expect(res.status).toBe(200);
  return generated(res.body)[0]!;
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  const res = await fetch(url, { headers, method });
  await res.arrayBuffer();
  return res;
}

const itemOf = async (c: TestClient, id: string): Promise<Item> => single((await c.call('GET', `/media/${id}`)).body);
/**
 * The item once its download is recorded: that happens after the last byte is sent, which the
 * client may see first (and on PostgreSQL its next request may go to the other node).
 */
const markedDownloaded = (c: TestClient, id: string): Promise<Item> =>
  until(`item ${id} marked downloaded`, async () => {
    const read = await itemOf(c, id);
    return read.downloadedAt !== null ? read : undefined;
  });

describe('signed file URLs', () => {
  it('a private item’s URLs expire after the TTL, and every response signs fresh ones', async () => {
    const item = await privateItem('expiring.png');
    const url = new URL(item.url);
    const expires = Number(url.searchParams.get('expires'));
    expect(url.searchParams.get('owner')).toBe('1');
    expect(expires * 1000).toBeGreaterThanOrEqual(t.clock.now() + TTL * 1000);
    expect(item.urlExpiresAt).toBe(new Date(expires * 1000).toISOString());
    expect((await get(item.url, { range: 'bytes=0-1' })).status).toBe(206);

    // The expiry is part of the signature: pushing it out breaks the URL.
    const edited = new URL(url);
    edited.searchParams.set('expires', String(expires + 86_400));
    expect((await get(edited.href)).status).toBe(404);
    // So is the owner mark.
    const unmarked = new URL(url);
    unmarked.searchParams.delete('owner');
    expect((await get(unmarked.href)).status).toBe(404);

    t.clock.set(expires * 1000);
    const expired = await fetch(item.url);
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ success: false, code: 'permission_error' });
    expect((await get(item.thumbnailUrl || item.formats[0]!.url)).status).toBe(403);

    // GET /media/:id and GET /media hand out URLs that work again.
    const fresh = await itemOf(owner, item.id);
    expect(fresh.url).not.toBe(item.url);
    expect((await get(fresh.url, { range: 'bytes=0-1' })).status).toBe(206);
    const inList = listed((await owner.call('GET', '/media?user=me&limit=100')).body).find((m) => m.id === item.id);
    expect((await get(inList!.url, { range: 'bytes=0-1' })).status).toBe(206);
  });

  it('a public item’s URLs do not expire', async () => {
    const item = await publicItem('a lighthouse that never closes');
    expect(new URL(item.url).searchParams.has('expires')).toBe(false);
    expect(item.urlExpiresAt).toBeNull();
    const seen = listed((await other.call('GET', `/media?user=url-owner&limit=100`)).body).find(
      (m) => m.id === item.id,
    )!;
    t.clock.advance(400 * 86_400_000);
    expect((await get(seen.url, { range: 'bytes=0-1' })).status).toBe(206);
  });
});

describe('a complete download of the url counts as the owner’s download', () => {
  it('marks the item when the owner’s URL sent the whole body, not for a fragment, HEAD or thumbnail', async () => {
    const item = await privateItem('whole.png');
    expect((await get(item.url, { range: 'bytes=0-' })).status).toBe(206);
    expect((await get(item.url, {}, 'HEAD')).status).toBe(200);
    expect((await get(item.thumbnailUrl || item.url, { range: 'bytes=0-3' })).status).toBe(206);
    let now = await itemOf(owner, item.id);
    expect(now.downloadedAt).toBeNull();
    expect(now.expiresAt).not.toBeNull();

    const whole = await fetch(item.url);
    expect(Buffer.from(await whole.arrayBuffer()).equals(png)).toBe(true);
    now = await markedDownloaded(owner, item.id);
    expect(now.downloadedAt).toBe(new Date(t.clock.now()).toISOString());
    expect(now.expiresAt).toBeNull();
  });

  it('another user’s complete download of a public item does not mark it; the owner’s does', async () => {
    const item = await publicItem('a kite over a grey beach');
    const theirs = listed((await other.call('GET', `/media?user=url-owner&limit=100`)).body).find(
      (m) => m.id === item.id,
    )!;
    expect(new URL(theirs.url).searchParams.has('owner')).toBe(false);
    expect((await get(theirs.url)).status).toBe(200);
    expect((await itemOf(owner, item.id)).downloadedAt).toBeNull();

    expect((await get(item.url)).status).toBe(200);
    expect((await markedDownloaded(owner, item.id)).downloadedAt).not.toBeNull();
  });

  it('retention deletes an item whose url was only streamed, and keeps one downloaded whole', async () => {
    const streamed = await privateItem('streamed.png');
    const kept = await privateItem('kept.png');
    expect((await get(streamed.url, { range: 'bytes=0-' })).status).toBe(206);
    expect((await get(kept.url)).status).toBe(200);
    await markedDownloaded(owner, kept.id);
    t.clock.advance(91 * 86_400_000);
    await t.service.sweepRetention();
    expect((await owner.call('GET', `/media/${streamed.id}`)).status).toBe(404);
    expect((await owner.call('GET', `/media/${kept.id}`)).status).toBe(200);
  });
});
