import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3BlobStore } from '../../../../server/storage/blobs/s3.ts';
import type { BlobStore } from '../../../../server/storage/blobs/index.ts';
import { createDiskBlobStore } from '../../../../server/storage/blobs/index.ts';
import { exited, runServiceCli as cli, serveProcess } from '../../../support/service-process.ts';
import type { TestS3 } from '../../../support/s3.ts';
import { startS3 } from '../../../support/s3.ts';
import { clientFor, makePng, processEnv, single, startTestService, testS3 } from '../helpers.ts';
import type { TestClient, TestService } from '../helpers.ts';

let s3: TestS3;
let png: Buffer;
let scratch: string;
beforeAll(async () => {
  [s3, scratch] = await Promise.all([startS3({ bucket: 'clipdesk-serve' }), mkdtemp(join(tmpdir(), 'clipdesk-st-'))]);
  png = await readFile(await makePng(scratch, 'in.png', '80x60', 'purple'));
});
afterAll(async () => {
  await s3.stop();
  await rm(scratch, { recursive: true, force: true });
});

/** Ticket, PUT and completion of `png`: the new item. */
async function upload(c: TestClient, body = png) {
  const ticket = await c.call('POST', '/media/upload', { filename: 'in.png', mime: 'image/png', size: body.length });
  expect(ticket.status).toBe(200);
  const { id, uploadUrl } = ticket.body.result as { id: string; uploadUrl: string };
  const put = await fetch(uploadUrl, {
    method: 'PUT',
    body: new Uint8Array(body),
    headers: { 'content-type': 'image/png' },
  });
  return { id, put, complete: () => c.call('POST', `/media/${id}`) };
}

async function bucketKeys(prefix: string): Promise<string[]> {
  const store = createS3BlobStore({ bucket: s3.bucket, prefix, client: s3.client() });
  const keys: string[] = [];
  try {
    for await (const b of store.list('')) keys.push(b.key);
  } finally {
    store.client.destroy();
  }
  return keys.sort();
}

describe('clipdesk-service serve --storage s3://', () => {
  it('serves with its files in the bucket and its rows in the pass’s database (SQLite, or PostgreSQL); --file-redirects answers file URLs with the bucket’s presigned URL', async () => {
    const dataDir = join(scratch, 'serve-s3');
    // On the PostgreSQL pass the rows go to that directory's database: PostgreSQL and S3 together.
    const env = { ...(await processEnv(dataDir)), ...s3.env, CLIPDESK_STORAGE_URL: `s3://${s3.bucket}/team-a` };
    const created = await cli(['keys', 'create', '--user', 'ops', '--tier', 'pro', '--data', dataDir], env);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();

    for (const redirects of [false, true]) {
      const served = await serveProcess(dataDir, { env, args: redirects ? ['--file-redirects'] : [] });
      try {
        const c = clientFor(served.url, key);
        const up = await upload(c);
        expect(up.put.status).toBe(200);
        const done = await up.complete();
        expect(done.status).toBe(200);
        const item = single(done.body);
        // In the bucket under the prefix, nothing under the data directory.
        expect(await bucketKeys('team-a')).toContain(`media/${item.id}/image.png`);
        expect((await bucketKeys('team-a')).filter((k) => k.startsWith(`uploads/${up.id}/`))).toEqual([]);
        expect(item.downloadedAt).toBeNull();
        const direct = await fetch(item.url, { redirect: 'manual' });
        if (redirects) {
          expect(direct.status).toBe(302);
          const location = direct.headers.get('location') ?? '';
          expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/team-a/media/${item.id}/image.png?`)).toBe(true);
          await direct.body?.cancel();
          const fromBucket = await fetch(location);
          expect(fromBucket.status).toBe(200);
          expect(fromBucket.headers.get('content-type')).toBe('image/png');
          expect(Buffer.from(await fromBucket.arrayBuffer())).toEqual(png);
        } else {
          expect(direct.status).toBe(200);
          expect(Buffer.from(await direct.arrayBuffer())).toEqual(png);
          const range = await fetch(item.url, { headers: { range: 'bytes=1-3' } });
          expect(range.status).toBe(206);
          expect(range.headers.get('content-range')).toBe(`bytes 1-3/${png.length}`);
          expect(Buffer.from(await range.arrayBuffer())).toEqual(png.subarray(1, 4));
        }
        // The owner's whole file, streamed or redirected, counts as the download that keeps the item.
        expect(single((await c.call('GET', `/media/${item.id}`)).body).downloadedAt).not.toBeNull();
        // The authenticated download streams through the service either way (it carries the key).
        const content = await c.call('GET', `/media/${item.id}/content`);
        expect(content.status).toBe(200);
        expect((await fetch(served.url.replace(/\/v1$/, '/readyz'))).status).toBe(200);
      } finally {
        served.child.kill('SIGTERM');
        await exited(served.child);
      }
    }
  });

  it('a bucket that cannot be reached stops the start with a message naming the storage, exit 1', async () => {
    const dataDir = join(scratch, 'serve-missing');
    const missing = await cli(['serve', '--port', '0', '--data', dataDir, '--storage', 's3://no-such-bucket/x'], {
      ...process.env,
      ...s3.env,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('the file storage s3://no-such-bucket/x cannot be reached');
    expect(missing.stdout).not.toContain('listening');
    const closed = await cli(['serve', '--port', '0', '--data', dataDir, '--storage', 's3://clipdesk-serve/x'], {
      ...process.env,
      ...s3.env,
      CLIPDESK_S3_ENDPOINT: 'http://127.0.0.1:9',
    });
    expect(closed.code).toBe(1);
    expect(closed.stderr).toContain('the file storage s3://clipdesk-serve/x cannot be reached');
    // --file-redirects needs presigned URLs: disk has none.
    const usage = await cli(['serve', '--port', '0', '--data', dataDir, '--file-redirects'], process.env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--file-redirects needs S3 storage');
  });
});

describe('the bucket lost while serving', () => {
  it('answers 503 with Retry-After, and leaves no rows for what could not be stored', async () => {
    const own = await startS3({ bucket: 'clipdesk-lost' });
    const client = own.client();
    const store = createS3BlobStore({ bucket: own.bucket, prefix: '', client });
    const t = await startTestService({ store });
    try {
      const c = await t.client('lost', 'pro');
      const before = await upload(c);
      expect(before.put.status).toBe(200);
      const item = single((await before.complete()).body);
      const pending = await c.call('POST', '/media/upload', { filename: 'b.png', mime: 'image/png', size: png.length });
      const { id: ticketId, uploadUrl } = pending.body.result as { id: string; uploadUrl: string };
      const received = await upload(c);
      expect(received.put.status).toBe(200);

      await own.stop();

      const put = await fetch(uploadUrl, {
        method: 'PUT',
        body: new Uint8Array(png),
        headers: { 'content-type': 'image/png' },
      });
      expect(put.status).toBe(503);
      expect(put.headers.get('retry-after')).toBe('5');
      expect(await put.json()).toMatchObject({ code: 'provider_unavailable', retry_after: 5 });
      // Not received: completing it is refused as before its PUT.
      expect((await c.call('POST', `/media/${ticketId}`)).status).toBe(400);

      const generation = await c.call('POST', '/images/generations', {
        model: 'clipdesk/still',
        prompt: 'a lighthouse',
        size: '256x256',
      });
      expect(generation.status).toBe(503);
      expect(generation.headers.get('retry-after')).toBe('5');
      const completion = await received.complete();
      expect(completion.status).toBe(503);

      const file = await fetch(item.url);
      expect(file.status).toBe(503);
      expect(file.headers.get('retry-after')).toBe('5');
      expect((await fetch(t.service.url.replace(/\/v1$/, '/readyz'))).status).toBe(503);

      // The one item stored before is all there is; the upload can still be completed later.
      const listed = await c.call('GET', '/media?user=me&limit=100');
      expect(listed.body.result.total).toBe(1);
      expect(t.service.stats.running('lost', 'image')).toBe(0);
    } finally {
      await t.stop();
      client.destroy();
      await own.stop();
    }
  });
});

describe.each(['disk', 's3'] as const)('a store that fails part-way (%s)', (kind) => {
  it('leaves no stored file and no row of a generation or upload whose files could not all be stored', async () => {
    const dataDir = await mkdtemp(join(scratch, 'partial-'));
    const client = kind === 's3' ? (await testS3()).client() : null;
    const real: BlobStore = client
      ? createS3BlobStore({ bucket: (await testS3()).bucket, prefix: `partial-${kind}`, client })
      : createDiskBlobStore(dataDir);
    // The real store, except that it cannot take thumbnails or items' upload moves: a put that
    // fails after others of the same item succeeded.
    const failing: BlobStore = {
      ...real,
      putFile: (key, path, options) =>
        key.endsWith('/thumbnail.jpg')
          ? Promise.reject(new Error('the store refused this one'))
          : real.putFile(key, path, options),
      move: () => Promise.reject(new Error('the store refused the move')),
    };
    const t = await startTestService({ dataDir, store: failing });
    try {
      const c = await t.client('partial', 'pro');
      const generation = await c.call('POST', '/images/generations', {
        model: 'clipdesk/still',
        prompt: 'a half-stored pear',
        size: '256x256',
      });
      expect(generation.status).toBe(503);
      expect(generation.headers.get('retry-after')).toBe('5');
      const up = await upload(c);
      expect(up.put.status).toBe(200);
      expect((await up.complete()).status).toBe(503);
      // Nothing listed, nothing charged, and nothing stored but the received upload, still there
      // to be completed once the store works again.
      expect((await c.call('GET', '/media?user=me&limit=100')).body.result.total).toBe(0);
      const stored: string[] = [];
      for await (const b of real.list('')) stored.push(b.key);
      expect(stored).toEqual([expect.stringMatching(new RegExp(`^uploads/${up.id}/put-[0-9a-f]{24}$`))]);
    } finally {
      await t.stop();
      client?.destroy();
    }
  });
});

describe.each(['disk', 's3'] as const)('clipdesk-service fsck on %s', (kind) => {
  let t: TestService;
  let env: NodeJS.ProcessEnv;
  let storageArgs: string[];
  beforeAll(async () => {
    t = await startTestService({ storage: kind });
    // The pass's database (SQLite in the data directory, or its PostgreSQL database) with either store.
    env = { ...(await processEnv(t.dataDir)), ...(kind === 's3' ? (await testS3()).env : {}) };
    storageArgs = ['--storage', kind === 's3' ? t.store.location : t.dataDir];
  });
  afterAll(async () => {
    await t.stop();
  });

  const fsck = (...args: string[]) => cli(['fsck', '--data', t.dataDir, ...storageArgs, ...args], env);

  it('lists orphaned files and items whose files are gone; --repair removes them and keeps what is whole', async () => {
    const c = await t.client('fsck', 'pro');
    const ok = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'a kept',
      size: '256x256',
    });
    expect(ok.status).toBe(200);
    const kept = (ok.body as { data: Array<{ id: string }> }).data[0]!.id;
    const gone = single((await (await upload(c)).complete()).body).id;
    const lostUpload = await upload(c);
    expect(lostUpload.put.status).toBe(200);
    await t.store.delete(`media/${gone}/image.png`);
    for (const key of await t.storedKeys(`uploads/${lostUpload.id}/`)) await t.store.delete(key);
    const orphan = `media/med_${'0'.repeat(24)}/image.png`;
    await put(t.store, orphan);

    // With the default minimum age, a fresh file is work in flight: listed apart, never an orphan.
    const young = await fsck('--json');
    expect(young.code).toBe(1);
    expect(JSON.parse(young.stdout)).toMatchObject({ orphans: [], recent: 1, lostItems: [{ id: gone }] });
    const found = await fsck('--min-age', '0', '--json');
    expect(found.code).toBe(1);
    const report = JSON.parse(found.stdout) as {
      orphans: Array<{ key: string }>;
      lostItems: Array<{ id: string }>;
      lostUploads: string[];
      repaired: null;
    };
    expect(report.orphans.map((o) => o.key)).toEqual([orphan]);
    expect(report.lostItems.map((i) => i.id)).toEqual([gone]);
    expect(report.lostUploads).toEqual([lostUpload.id]);
    expect((await fsck('--min-age', '0')).stdout).toContain(`orphaned file: ${orphan}`);

    const repaired = await fsck('--repair', '--min-age', '0');
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toContain(
      'removed 1 orphaned file(s), deleted 1 lost item(s), set 1 upload(s) back to pending',
    );
    expect(await t.store.head(orphan)).toBeNull();
    expect((await c.call('GET', `/media/${gone}`)).status).toBe(404);
    expect((await c.call('GET', `/media/${kept}`)).status).toBe(200);
    // The upload's signed URL takes the file again.
    expect((await lostUpload.complete()).status).toBe(400);
    expect(await fsck('--min-age', '0')).toMatchObject({ code: 0 });
  });

  it('refuses to delete most items at once (the wrong --storage), unless --force', async () => {
    const c = await t.client('fsck-wrong', 'pro');
    const done = single((await (await upload(c)).complete()).body).id;
    const keys = await t.storedKeys('media/');
    for (const key of keys) await t.store.delete(key);
    const refused = await fsck('--repair', '--min-age', '0');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('usually means the wrong --storage or --data');
    expect((await c.call('GET', `/media/${done}`)).status).toBe(200);
    const forced = await fsck('--repair', '--min-age', '0', '--force');
    expect(forced.code).toBe(0);
    expect((await c.call('GET', `/media/${done}`)).status).toBe(404);
  });
});

async function put(store: BlobStore, key: string): Promise<void> {
  await store.putStream(key, Readable.from([png]), { contentType: 'image/png', maxBytes: png.length });
}
