import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseStorage } from '../../../../server/cli/locations.ts';
import type { BlobStore } from '../../../../server/storage/blobs/index.ts';
import {
  BlobKeyError,
  BlobNotFoundError,
  BlobRangeError,
  BlobTooLargeError,
  createDiskBlobStore,
  openBlobStore,
} from '../../../../server/storage/blobs/index.ts';
import { createS3BlobStore } from '../../../../server/storage/blobs/s3.ts';
import type { TestS3 } from '../../../support/s3.ts';
import { startS3 } from '../../../support/s3.ts';

const MiB = 1 << 20;
/** Above lib-storage's 5 MiB part: the S3 store's multipart path (3 parts), not a single PUT. */
const LARGE = 11 * MiB + 123;

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
const id = (): string => randomBytes(12).toString('hex');

/** `data` as a stream of 1 MiB chunks (the way a request body arrives: many chunks). */
function chunked(data: Buffer, chunk = MiB): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < data.length; i += chunk) yield data.subarray(i, i + chunk);
    })(),
    { objectMode: false },
  );
}

/** Yields `bytes`, then fails: a client that vanishes mid-upload. */
function failingAfter(bytes: number): Readable {
  return Readable.from(
    (async function* () {
      for (let sent = 0; sent < bytes; sent += MiB) {
        yield randomBytes(Math.min(MiB, bytes - sent));
        await new Promise((r) => setImmediate(r));
      }
      throw new Error('the client went away');
    })(),
    { objectMode: false },
  );
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function listKeys(store: BlobStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const b of store.list(prefix)) keys.push(b.key);
  return keys.sort();
}

interface Harness {
  store: BlobStore;
  /** Nothing half-written anywhere: temp files on disk, multipart parts in the bucket. */
  leftovers(): string[];
}

let s3: TestS3;
let dataDir: string;
let work: string;

beforeAll(async () => {
  [s3, dataDir, work] = await Promise.all([
    startS3({ bucket: 'clipdesk-blobs' }),
    mkdtemp(join(tmpdir(), 'clipdesk-blobs-disk-')),
    mkdtemp(join(tmpdir(), 'clipdesk-blobs-work-')),
  ]);
});

afterAll(async () => {
  await Promise.all([
    s3?.stop(),
    rm(dataDir, { recursive: true, force: true }),
    rm(work, { recursive: true, force: true }),
  ]);
});

const harnesses: Record<'disk' | 's3', () => Harness> = {
  disk: () => ({
    store: createDiskBlobStore(dataDir),
    leftovers: () => (existsSync(join(dataDir, 'tmp')) ? readdirSync(join(dataDir, 'tmp')) : []),
  }),
  s3: () => ({
    store: createS3BlobStore({ bucket: s3.bucket, prefix: 'team/a', client: s3.client() }),
    leftovers: () => s3.pendingMultipartUploads(),
  }),
};

describe.each(['disk', 's3'] as const)('the %s blob store (one contract for both)', (kind) => {
  let h: Harness;
  beforeAll(() => {
    h = harnesses[kind]();
  });

  it('round-trips a large stream and a file byte for byte (SHA-256), with size and type', async () => {
    const data = randomBytes(LARGE);
    const key = `media/med_${id()}/video.mp4`;
    const put = await h.store.putStream(key, chunked(data), { contentType: 'video/mp4', maxBytes: 100_000_000 });
    expect(put).toEqual({ key, size: LARGE, contentType: 'video/mp4' });
    const read = await h.store.get(key);
    expect({ size: read.size, start: read.start, end: read.end, partial: read.partial }).toEqual({
      size: LARGE,
      start: 0,
      end: LARGE - 1,
      partial: false,
    });
    expect(read.contentType).toBe('video/mp4');
    expect(sha256(await readAll(read.stream))).toBe(sha256(data));
    expect(await h.store.head(key)).toEqual({ key, size: LARGE, contentType: 'video/mp4' });

    // A file: copied (the source stays), or moved (the source is gone).
    const image = randomBytes(300_000);
    const source = join(work, `src-${id()}.png`);
    await writeFile(source, image);
    const copied = `media/med_${id()}/image.png`;
    await h.store.putFile(copied, source, { contentType: 'image/png' });
    expect(existsSync(source)).toBe(true);
    const moved = `media/med_${id()}/image.png`;
    expect(await h.store.putFile(moved, source, { contentType: 'image/png', removeSource: true })).toEqual({
      key: moved,
      size: image.length,
      contentType: 'image/png',
    });
    expect(existsSync(source)).toBe(false);
    for (const k of [copied, moved]) expect(sha256(await readAll((await h.store.get(k)).stream))).toBe(sha256(image));

    // A put over an existing key replaces it whole.
    const other = randomBytes(1000);
    await h.store.putStream(copied, chunked(other), { contentType: 'image/png', maxBytes: 1000 });
    expect(await readAll((await h.store.get(copied)).stream)).toEqual(other);
    expect(h.leftovers()).toEqual([]);
  });

  it('serves byte ranges: first byte, last byte, a suffix, an end past the size; a start past the end is refused', async () => {
    const data = randomBytes(5000);
    const key = `media/med_${id()}/video.webm`;
    await h.store.putStream(key, chunked(data), { contentType: 'video/webm', maxBytes: 5000 });
    const range = async (r: Parameters<BlobStore['get']>[1]) => {
      const read = await h.store.get(key, r);
      return {
        bytes: await readAll(read.stream),
        start: read.start,
        end: read.end,
        size: read.size,
        partial: read.partial,
      };
    };
    expect(await range({ range: { start: 0, end: 0 } })).toEqual({
      bytes: data.subarray(0, 1),
      start: 0,
      end: 0,
      size: 5000,
      partial: true,
    });
    expect(await range({ range: { start: 4999 } })).toMatchObject({
      bytes: data.subarray(4999),
      start: 4999,
      end: 4999,
    });
    expect(await range({ range: { suffix: 10 } })).toMatchObject({
      bytes: data.subarray(4990),
      start: 4990,
      end: 4999,
    });
    expect(await range({ range: { suffix: 9000 } })).toMatchObject({ bytes: data, start: 0, end: 4999 });
    expect(await range({ range: { start: 100, end: 199 } })).toMatchObject({ bytes: data.subarray(100, 200) });
    expect(await range({ range: { start: 4990, end: 1_000_000 } })).toMatchObject({
      bytes: data.subarray(4990),
      end: 4999,
    });
    for (const past of [{ start: 5000 }, { start: 9999, end: 10_500 }, { suffix: 0 }]) {
      const refused = await h.store.get(key, { range: past }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BlobRangeError);
      expect((refused as BlobRangeError).size).toBe(5000);
    }
    // An empty file has no bytes to range over.
    const empty = `media/med_${id()}/image.png`;
    await h.store.putStream(empty, chunked(Buffer.alloc(0)), { contentType: 'image/png', maxBytes: 10 });
    expect(await readAll((await h.store.get(empty)).stream)).toEqual(Buffer.alloc(0));
    await expect(h.store.get(empty, { range: { start: 0 } })).rejects.toBeInstanceOf(BlobRangeError);
  });

  it('takes exactly the byte limit, and refuses one byte more while streaming, leaving nothing behind', async () => {
    const exact = randomBytes(LARGE);
    const ok = `uploads/upl_${id()}/data`;
    expect((await h.store.putStream(ok, chunked(exact), { contentType: 'video/mp4', maxBytes: LARGE })).size).toBe(
      LARGE,
    );
    expect(sha256(await readAll((await h.store.get(ok)).stream))).toBe(sha256(exact));

    // The extra byte comes last, after whole parts went to the bucket: the multipart upload is aborted.
    const over = `uploads/upl_${id()}/data`;
    const refused = await h.store
      .putStream(over, chunked(randomBytes(LARGE + 1)), { contentType: 'video/mp4', maxBytes: LARGE })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BlobTooLargeError);
    expect((refused as Error).message).toBe(`more than the ${LARGE} bytes allowed; nothing was stored`);
    expect(await h.store.head(over)).toBeNull();
    expect(h.leftovers()).toEqual([]);

    // Far over, early in the first part: refused without reading the rest.
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled += MiB;
        this.push(randomBytes(MiB));
      },
    });
    await expect(
      h.store.putStream(over, endless, { contentType: 'video/mp4', maxBytes: 3 * MiB }),
    ).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(pulled).toBeLessThan(40 * MiB);
    expect(endless.destroyed).toBe(true);
    expect(await h.store.head(over)).toBeNull();
    expect(h.leftovers()).toEqual([]);
  });

  it('keeps nothing when the source fails mid-way or the put is given up', async () => {
    const key = `uploads/upl_${id()}/data`;
    await expect(
      h.store.putStream(key, failingAfter(7 * MiB), { contentType: 'video/mp4', maxBytes: 100_000_000 }),
    ).rejects.toThrow('the client went away');
    expect(await h.store.head(key)).toBeNull();
    expect(h.leftovers()).toEqual([]);

    const controller = new AbortController();
    let sent = 0;
    const slow = new Readable({
      read() {
        sent += MiB;
        if (sent === 8 * MiB) controller.abort();
        this.push(randomBytes(MiB));
      },
    });
    await expect(
      h.store.putStream(key, slow, { contentType: 'video/mp4', maxBytes: 100_000_000, signal: controller.signal }),
    ).rejects.toThrow();
    expect(await h.store.head(key)).toBeNull();
    expect(h.leftovers()).toEqual([]);
    expect(await listKeys(h.store, key)).toEqual([]);
  });

  it('stores concurrent puts of different keys each whole', async () => {
    const items = Array.from({ length: 6 }, (_, i) => ({
      key: `media/med_${id()}/video.mp4`,
      data: randomBytes(i % 2 === 0 ? 6 * MiB + i : 200_000 + i),
    }));
    await Promise.all(
      items.map((it) =>
        h.store.putStream(it.key, chunked(it.data, 256 * 1024), { contentType: 'video/mp4', maxBytes: 20_000_000 }),
      ),
    );
    for (const it of items) expect(sha256(await readAll((await h.store.get(it.key)).stream))).toBe(sha256(it.data));
    expect(h.leftovers()).toEqual([]);
  });

  it('deletes, and deleting a missing key is not an error', async () => {
    const key = `media/med_${id()}/thumbnail.jpg`;
    await h.store.putStream(key, chunked(randomBytes(10)), { contentType: 'image/jpeg', maxBytes: 10 });
    await h.store.delete(key);
    expect(await h.store.head(key)).toBeNull();
    await expect(h.store.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(h.store.delete(key)).resolves.toBeUndefined();
    await expect(h.store.delete(`media/med_${id()}/never.png`)).resolves.toBeUndefined();
  });

  it('lists by prefix, as a plain string prefix', async () => {
    const a = `med_${id()}`;
    const keys = [`media/${a}/video.mp4`, `media/${a}/thumbnail.jpg`, `media/${a}x/image.png`, `uploads/upl_${a}/data`];
    for (const key of keys)
      await h.store.putStream(key, chunked(randomBytes(7)), { contentType: 'image/png', maxBytes: 7 });
    expect(await listKeys(h.store, `media/${a}/`)).toEqual([`media/${a}/thumbnail.jpg`, `media/${a}/video.mp4`]);
    expect(await listKeys(h.store, `media/${a}`)).toEqual([
      `media/${a}/thumbnail.jpg`,
      `media/${a}/video.mp4`,
      `media/${a}x/image.png`,
    ]);
    expect(await listKeys(h.store, `uploads/upl_${a}`)).toEqual([`uploads/upl_${a}/data`]);
    const all = await listKeys(h.store, '');
    for (const key of keys) expect(all).toContain(key);
    const before = Date.now();
    for await (const b of h.store.list(`media/${a}/video`)) {
      expect(b).toEqual({ key: b.key, size: 7, contentType: null, modifiedMs: expect.any(Number) as number });
      // When it was written, for fsck's minimum age (S3 keeps whole seconds).
      expect(Math.abs((b.modifiedMs ?? 0) - before)).toBeLessThan(60_000);
    }
    expect(await listKeys(h.store, `media/med_${id()}`)).toEqual([]);
  });

  it('moves a blob to another key (an upload completed into its item): the source is gone, the type is the new one', async () => {
    const from = `uploads/upl_${id()}/data`;
    const to = `media/med_${id()}/image.png`;
    const data = randomBytes(3 * MiB + 5);
    await h.store.putStream(from, chunked(data), { contentType: 'image/gif', maxBytes: data.length });
    const moved = await h.store.move(from, to, { contentType: 'image/png' });
    expect(moved).toMatchObject({ key: to, size: data.length });
    expect(await h.store.head(from)).toBeNull();
    const read = await h.store.get(to);
    expect(sha256(await readAll(read.stream))).toBe(sha256(data));
    expect(read.contentType).toBe('image/png');
    await expect(
      h.store.move(from, `media/med_${id()}/image.png`, { contentType: 'image/png' }),
    ).rejects.toBeInstanceOf(BlobNotFoundError);
    // Only the disk store has files of its own to hand to ffmpeg.
    if (kind === 'disk') expect(await readFile(h.store.localPath?.(to) ?? '')).toEqual(data);
    else expect('localPath' in h.store).toBe(false);
    expect(h.leftovers()).toEqual([]);
  });

  it('refuses keys with traversal, control characters or outside its areas, for every operation', async () => {
    const source = join(work, `bad-${id()}.png`);
    await writeFile(source, 'x');
    const bad = [
      '../outside.txt',
      'media/../../outside.txt',
      'media/med_a/../../../outside.txt',
      'media/./x.png',
      'media/.hidden',
      '/media/x.png',
      'media//x.png',
      'media/x\u0000.png',
      'media/a\nb.png',
      'media/a\u001b[31m.png',
      'media/a\\..\\b.png',
      'tmp/x',
      'logs/app.log',
      'media',
      '',
    ];
    for (const key of bad) {
      const attempts: Array<Promise<unknown>> = [
        h.store.putStream(key, chunked(Buffer.from('x')), { contentType: 'image/png', maxBytes: 10 }),
        h.store.putFile(key, source, { contentType: 'image/png' }),
        h.store.get(key),
        h.store.head(key),
        h.store.delete(key),
      ];
      if (h.store.presignGet) attempts.push(h.store.presignGet(key, { expiresInSeconds: 60 }));
      for (const attempt of attempts) await expect(attempt, JSON.stringify(key)).rejects.toBeInstanceOf(BlobKeyError);
    }
    await expect(listKeys(h.store, '../')).rejects.toBeInstanceOf(BlobKeyError);
    await expect(listKeys(h.store, 'media/\u0000')).rejects.toBeInstanceOf(BlobKeyError);
    expect(existsSync(join(dataDir, '..', 'outside.txt'))).toBe(false);
    expect(await readFile(source, 'utf8')).toBe('x');
  });

  it.runIf(kind === 's3')(
    'gives a presigned GET URL that works without credentials, with the type asked for',
    async () => {
      const data = randomBytes(70_000);
      const key = `media/med_${id()}/image.webp`;
      await h.store.putStream(key, chunked(data), { contentType: 'image/webp', maxBytes: 70_000 });
      const url = await h.store.presignGet!(key, {
        expiresInSeconds: 60,
        disposition: 'attachment; filename="x.webp"',
      });
      expect(url.startsWith(`${s3.endpoint}/${s3.bucket}/team/a/${key}?`)).toBe(true);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="x.webp"');
      expect(Buffer.from(await res.arrayBuffer())).toEqual(data);
    },
  );
});

describe('the S3 store from the service configuration', () => {
  it('reads s3://bucket/prefix through the --storage parser, and endpoint and credentials from the environment', async () => {
    for (const [k, v] of Object.entries(s3.env)) vi.stubEnv(k, v);
    const location = parseStorage(`s3://${s3.bucket}/configured/prefix/`, dataDir);
    expect(location).toEqual({ kind: 's3', bucket: s3.bucket, prefix: 'configured/prefix' });
    const store = await openBlobStore(location);
    try {
      await store.check();
      const key = `media/med_${id()}/image.png`;
      await store.putStream(key, chunked(Buffer.from('configured')), { contentType: 'image/png', maxBytes: 100 });
      const client = s3.client();
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'configured/' }));
      client.destroy();
      expect(listed.Contents?.map((o) => o.Key)).toEqual([`configured/prefix/${key}`]);
      expect((await readAll((await store.get(key)).stream)).toString()).toBe('configured');
      // A bucket that is not there fails the start-up check (on the same server, never the real AWS).
      const missing = await openBlobStore({ kind: 's3', bucket: 'no-such-bucket', prefix: '' });
      await expect(missing.check()).rejects.toThrow();
      missing.close();
    } finally {
      store.close();
      vi.unstubAllEnvs();
    }
  });
});
