import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { CONTENT_LIMITS } from '../../../shared/api/index.ts';
import { SMALL_VIDEO, makePng, startTestService, single } from './helpers.ts';
import type { ApiResponse, TestClient, TestService } from './helpers.ts';

let t: TestService;
let c: TestClient;
let png: Buffer;
beforeAll(async () => {
  t = await startTestService();
  c = await t.client('uploader', 'pro');
  png = await readFile(await makePng(t.dataDir, 'up.png', '80x60', 'purple'));
});
afterAll(async () => {
  await t.stop();
});

/** A body of exactly `size` bytes that starts with `head`, generated as it is sent (never in memory). */
function streamedBody(head: Buffer, size: number): Readable {
  let sent = 0;
  const chunk = Buffer.alloc(1 << 20);
  return new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      if (sent === 0) {
        const first = Buffer.concat([head, chunk]).subarray(0, Math.min(size, chunk.length));
        sent += first.length;
        return void this.push(first);
      }
      const n = Math.min(chunk.length, size - sent);
      sent += n;
      this.push(chunk.subarray(0, n));
    },
  });
}

/** PUT with node:http so the body can be streamed, chunked (no Content-Length) or not. */
function put(url: string, body: Readable | Buffer, headers: Record<string, string | number>): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString();
        // Only JSON is parsed: another answer (a proxy's 502 in text) fails the test's assertion
        // on its status, not the run with an uncaught exception.
        const json = /^application\/json\b/.test(res.headers['content-type'] ?? '');
        resolve({ status: res.statusCode ?? 0, headers: new Headers(), body: json && text ? JSON.parse(text) : text });
      });
    });
    req.on('error', reject);
    if (Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}

async function ticketData(
  mime: string,
  size: number,
  filename = 'file.bin',
): Promise<{ id: string; uploadUrl: string }> {
  const res = await ticket(mime, size, filename);
  expect(res.status).toBe(200);
  return res.body.result as { id: string; uploadUrl: string };
}

async function ticket(mime: string, size: number, filename = 'file.bin') {
  return c.call('POST', '/media/upload', { filename, mime, size });
}

describe('upload tickets', () => {
  it('are signed PUT URLs with an expiry', async () => {
    const res = await ticket('image/png', png.length, 'up.png');
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ method: 'PUT', headers: { 'content-type': 'image/png' } });
    expect(res.body.result.uploadUrl).toMatch(/\/v1\/uploads\/upl_[0-9a-f]+\?size=\d+&expires=\d+&sig=/);
    expect(Date.parse(String(res.body.result.expiresAt))).toBeGreaterThan(t.clock.now());
  });

  it('at exactly the limits are accepted; one byte over is 413', async () => {
    expect((await ticket('image/png', CONTENT_LIMITS.uploadImageBytes)).status).toBe(200);
    const img = await ticket('image/png', CONTENT_LIMITS.uploadImageBytes + 1);
    expect(img.status).toBe(413);
    expect(img.body.code).toBe('payload_too_large');
    expect((await ticket('video/mp4', CONTENT_LIMITS.uploadVideoBytes)).status).toBe(200);
    expect((await ticket('video/mp4', CONTENT_LIMITS.uploadVideoBytes + 1)).status).toBe(413);
  });

  it('refuse types that are not accepted, and bad fields', async () => {
    expect((await ticket('application/pdf', 10)).status).toBe(415);
    expect(
      (await c.call('POST', '/media/upload', { filename: '../../etc/passwd', mime: 'image/png', size: 10 })).status,
    ).toBe(400);
    expect((await c.call('POST', '/media/upload', { filename: 'a.png', mime: 'image/png', size: -1 })).status).toBe(
      400,
    );
    expect((await c.call('POST', '/media/upload', { filename: 'a.png', mime: 'image/png', size: 1.5 })).status).toBe(
      400,
    );
  });
});

describe('the signed PUT', () => {
  it('an image of exactly 20 MB streams in, completes, and is usable as image_url', async () => {
    const size = CONTENT_LIMITS.uploadImageBytes;
    const tk = await ticketData('image/png', size, 'big.png');
    // A real PNG, padded after its end chunk to exactly the limit (decoders stop at IEND).
    const res = await put(tk.uploadUrl, streamedBody(png, size), {
      'content-type': 'image/png',
      'content-length': size,
    });
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ bytes: size, mime: 'image/png' });
    const done = await c.call('POST', `/media/${tk.id}`);
    expect(done.status).toBe(200);
    const item = single(done.body);
    expect(item).toMatchObject({
      media: 'image',
      mime: 'image/png',
      width: 80,
      height: 60,
      bytes: size,
      public: false,
    });
    expect(single((await c.call('POST', `/media/${tk.id}`)).body).id).toBe(item.id);
    const gen = await c.call('POST', '/videos/generations', {
      ...SMALL_VIDEO,
      prompt: 'animate my upload',
      image_url: item.url,
      routing: 'compatible',
    });
    expect(gen.status).toBe(200);
  });

  it('one byte more than signed is 413 (declared up front, and streamed without a length)', async () => {
    const size = CONTENT_LIMITS.uploadImageBytes;
    const tk = await ticketData('image/png', size);
    const declared = await put(tk.uploadUrl, streamedBody(png, size + 1), {
      'content-type': 'image/png',
      'content-length': size + 1,
    }).catch((e: unknown) => ({ status: -1, body: String(e) }));
    expect(declared.status).toBe(413);
    const chunked = await put(tk.uploadUrl, streamedBody(png, size + 1), {
      'content-type': 'image/png',
      'transfer-encoding': 'chunked',
    });
    expect(chunked.status).toBe(413);
    expect(chunked.body.code).toBe('payload_too_large');
    // The refused bodies left nothing behind and the URL is still good for the right bytes.
    expect(await t.leftovers()).toEqual([]);
    const small = await ticketData('image/png', png.length);
    expect((await put(small.uploadUrl, png, { 'content-type': 'image/png' })).status).toBe(200);
  });

  it('a 100 MB video streams in at exactly the limit', async () => {
    const size = CONTENT_LIMITS.uploadVideoBytes;
    const tk = await ticketData('video/mp4', size, 'big.mp4');
    const head = Buffer.from([0, 0, 0, 0x20, ...Buffer.from('ftypisom'), 0, 0, 2, 0]);
    const res = await put(tk.uploadUrl, streamedBody(head, size), {
      'content-type': 'video/mp4',
      'content-length': size,
    });
    expect(res.status).toBe(200);
    // The bytes are an MP4 header and zeros: ffprobe cannot decode it, so completion refuses it.
    const done = await c.call('POST', `/media/${tk.id}`);
    expect(done.status).toBe(415);
    expect(done.body.code).toBe('unsupported_media_type');
  });

  it('content is sniffed, not trusted from the declared type or the name', async () => {
    const text = Buffer.from('this is plainly not a PNG file, whatever its name says....................');
    const tk = await ticketData('image/png', text.length, 'fake.png');
    const res = await put(tk.uploadUrl, text, { 'content-type': 'image/png' });
    expect(res.status).toBe(415);
    // A real PNG declared as a video is refused too.
    const tk2 = await ticketData('video/mp4', png.length, 'clip.mp4');
    expect((await put(tk2.uploadUrl, png, { 'content-type': 'video/mp4' })).status).toBe(415);
  });

  it('a GIF header followed by HTML passes sniffing but is refused 415 at completion, and its bytes are gone', async () => {
    const html = '<!doctype html><html><body>' + 'x'.repeat(400) + '</body></html>';
    const fake = Buffer.concat([Buffer.from('GIF89a'), Buffer.from(html)]).subarray(0, 306);
    const tk = await ticketData('image/gif', fake.length, 'fake.gif');
    expect((await put(tk.uploadUrl, fake, { 'content-type': 'image/gif' })).status).toBe(200);
    const done = await c.call('POST', `/media/${tk.id}`);
    expect(done.status).toBe(415);
    expect(done.body).toMatchObject({ code: 'unsupported_media_type' });
    expect(done.body.message).toMatch(/does not decode as an image/);
    expect(await t.storedKeys(`uploads/${tk.id}/`)).toEqual([]);
    expect((await c.call('GET', '/media?user=me&limit=100')).body.result.medias).not.toContainEqual(
      expect.objectContaining({ mime: 'image/gif' }),
    );
    // Completing again finds nothing received.
    expect((await c.call('POST', `/media/${tk.id}`)).status).toBe(400);
  });

  it('tampered, mismatched or expired signatures are refused', async () => {
    const tk = await ticketData('image/png', png.length);
    const url = new URL(tk.uploadUrl);
    const tampered = new URL(url);
    tampered.searchParams.set(
      'sig',
      url.searchParams.get('sig')!.replace(/^./, (ch) => (ch === 'A' ? 'B' : 'A')),
    );
    expect((await put(tampered.href, png, {})).status).toBe(403);
    const bigger = new URL(url);
    bigger.searchParams.set('size', String(png.length + 10));
    expect((await put(bigger.href, png, {})).status).toBe(403);
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect((await put(later.href, png, {})).status).toBe(403);
    const traversal = tk.uploadUrl.replace(/upl_[0-9a-f]+/, '..%2F..%2Fsecret.key');
    expect((await put(traversal, png, {})).status).toBe(403);
    t.clock.advance(16 * 60_000);
    const expired = await put(tk.uploadUrl, png, {});
    expect(expired.status).toBe(403);
    expect(expired.body.message).toMatch(/expired/);
  });

  it('a client that vanishes mid-upload leaves nothing, and the URL can be used again', async () => {
    const size = 5_000_000;
    const tk = await ticketData('image/png', size);
    await new Promise<void>((resolve) => {
      const req = request(tk.uploadUrl, { method: 'PUT', headers: { 'content-length': size } });
      req.on('error', () => resolve());
      req.write(Buffer.concat([png, Buffer.alloc(1_000_000)]));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    for (let i = 0; i < 100 && (await t.leftovers()).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await t.leftovers()).toEqual([]);
    expect(await t.storedKeys(`uploads/${tk.id}/`)).toEqual([]);
    const res = await put(tk.uploadUrl, streamedBody(png, size), { 'content-length': size });
    expect(res.status).toBe(200);
  });

  it('completions of one upload at the same time (a retry, another node) make one item, and all answer it', async () => {
    const tk = await ticketData('image/png', png.length, 'twice.png');
    expect((await put(tk.uploadUrl, png, { 'content-type': 'image/png', 'content-length': png.length })).status).toBe(
      200,
    );
    const listed = async () =>
      (await c.call('GET', '/media?user=me&limit=100')).body.result as { total: number; medias: Array<{ id: string }> };
    const before = (await listed()).total;
    const answers = await Promise.all([1, 2, 3].map(() => c.call('POST', `/media/${tk.id}`)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => single(a.body).id)).size).toBe(1);
    // Nothing else was made of it: one item more in the library, and no file of any other.
    const after = await listed();
    expect(after.total).toBe(before + 1);
    const file = await fetch(single(answers[0]!.body).url);
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
    const keys = await t.storedKeys('media/');
    expect(keys.filter((k) => !after.medias.some((m) => k.startsWith(`media/${m.id}/`)))).toEqual([]);
  });

  it('completing an upload that has not arrived, or someone else’s, is refused', async () => {
    const tk = await ticketData('image/png', png.length);
    expect((await c.call('POST', `/media/${tk.id}`)).status).toBe(400);
    const other = await t.client('someone-else');
    expect((await other.call('POST', `/media/${tk.id}`)).status).toBe(404);
  });
});
