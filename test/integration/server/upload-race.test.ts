import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable, Transform, pipeline } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../../server/storage/blobs/index.ts';
import { createDiskBlobStore } from '../../../server/storage/blobs/index.ts';
import { checkStorage, repairStorage } from '../../../server/storage/fsck.ts';
import { newPutId, uploadPutKey } from '../../../server/storage/layout.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import {
  TEST_STORAGE,
  makePng,
  openTestDatabase,
  pngUploadTicket,
  single,
  startTestService,
  testS3,
} from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * The moment an upload's claim cannot cover (server/uploads/receive-claim.ts): a PUT's body has
 * arrived and its claim is confirmed, and before the store has completed that body a database
 * restart voids the claim and a whole second PUT, on another node, claims the upload and streams
 * its own body. Both bodies reach the store. Each PUT stores under a key of its own and the upload
 * row records the kept one's, so the later store never replaces the earlier's bytes: the upload
 * completes with exactly the body of the PUT that answered 200, and the other PUT's body is gone.
 *
 * The order is forced without a restart. Each node's store is the real one (disk, or s3rver's
 * bucket on the S3 pass) behind a gate that holds the end of a body until the test lets it go, so
 * the store completes it (the disk's rename, S3's last part and completion) only then; the claim
 * is voided as a restart voids it, by naming an earlier run of the database server in its row.
 */
let a: TestService;
let b: TestService;
let gateA: Gate;
let gateB: Gate;
let real: BlobStore;
let closeStore: () => void = () => undefined;
let db: SqlDatabase;
let c: TestClient;
let png: Buffer;
/** The same size and type as `png`, another body: which PUT's body was kept shows. */
let other: Buffer;

beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-svc-race-'));
  if (TEST_STORAGE === 's3') {
    const s3 = await testS3();
    const { createS3BlobStore } = await import('../../../server/storage/blobs/s3.ts');
    const client = s3.client();
    real = createS3BlobStore({ bucket: s3.bucket, prefix: `race-${basename(dataDir)}`, client });
    closeStore = () => client.destroy();
  } else {
    real = createDiskBlobStore(dataDir);
  }
  gateA = gated(real);
  gateB = gated(real);
  // Two nodes (one each) on one database and one store.
  a = await startTestService({ dataDir, store: gateA.store, nodes: 1 });
  b = await startTestService({ dataDir, clock: a.clock, store: gateB.store, nodes: 1, dataFolderLock: false });
  db = await openTestDatabase(dataDir);
  c = await a.client('racing-uploader');
  png = await readFile(await makePng(dataDir, 'race.png', '64x48', 'maroon'));
  other = Buffer.from(png);
  // Past the leading bytes sniffing reads: the same type, another body.
  other[other.length - 5] = (other[other.length - 5]! + 1) % 256;
});
afterAll(async () => {
  await db?.close();
  await b?.service.close();
  await a?.stop();
  closeStore();
});

interface Gate {
  store: BlobStore;
  /**
   * Holds the next upload body put through this store at its end: every byte handed to the store,
   * which does not complete it until `release()`. `reached` resolves once the body is held there,
   * which is after the PUT confirmed its claim (the body ends only then).
   */
  hold(): { reached: Promise<void>; release(): void };
}

function gated(store: BlobStore): Gate {
  let armed: { reached: () => void; opened: Promise<void> } | null = null;
  return {
    store: {
      ...store,
      putStream(key, source, options) {
        const gate = key.startsWith('uploads/') ? armed : null;
        if (!gate) return store.putStream(key, source, options);
        armed = null;
        const held = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            done(null, chunk);
          },
          flush(done) {
            gate.reached();
            gate.opened.then(() => done(), done);
          },
        });
        // The source's failure reaches the store through `held`, as it would directly.
        pipeline(source, held, () => undefined);
        return store.putStream(key, held, options);
      },
    },
    hold() {
      let reached!: () => void;
      let release!: () => void;
      const atEnd = new Promise<void>((resolve) => (reached = resolve));
      armed = { reached, opened: new Promise<void>((resolve) => (release = resolve)) };
      return { reached: atEnd, release };
    },
  };
}

interface Ticket {
  id: string;
  put(on: TestService, body: Buffer): Promise<{ status: number; message: string }>;
}

async function ticket(): Promise<Ticket> {
  const { id, headers, urlOn } = await pngUploadTicket(c, 'race.png', png.length);
  return {
    id,
    async put(on, body) {
      const res = await fetch(urlOn(on.service.url), {
        method: 'PUT',
        body: new Uint8Array(body),
        headers,
      });
      const answer = (await res.json()) as { message?: string };
      return { status: res.status, message: answer.message ?? '' };
    },
  };
}

/** What a database restart does to the PUT holding upload `id`'s claim: the run its row names is over. */
async function voidClaim(id: string): Promise<void> {
  const row = await db.get<{ node: string }>('SELECT node FROM leases WHERE name = ?', `upload:${id}`);
  if (!row) throw new Error(`upload ${id} is not claimed`);
  const holder = row.node.slice(row.node.lastIndexOf('|') + 1);
  await db.run('UPDATE leases SET node = ? WHERE name = ?', `an-earlier-run|${holder}`, `upload:${id}`);
}

async function recordedKey(id: string): Promise<string | null> {
  return (
    (await db.get<{ received_key: string | null }>('SELECT received_key FROM uploads WHERE id = ?', id))
      ?.received_key ?? null
  );
}

/** The keys stored under upload `id`'s prefix, and the one its row records. */
async function storedFor(id: string): Promise<{ keys: string[]; recorded: string | null }> {
  return { keys: await a.storedKeys(`uploads/${id}/`), recorded: await recordedKey(id) };
}

/** The one body stored for upload `id`, which must be under the key its row records. */
async function keptBody(id: string): Promise<Buffer> {
  const { keys, recorded } = await storedFor(id);
  expect(keys).toEqual([recorded]);
  return buffer((await real.get(keys[0]!)).stream);
}

/** Completes upload `id` and answers the bytes of the item it became. */
async function completedBytes(id: string): Promise<Buffer> {
  const done = await c.call('POST', `/media/${id}`);
  expect(done.status).toBe(200);
  const item = single(done.body);
  const file = await fetch(item.url);
  expect(file.status).toBe(200);
  return Buffer.from(await file.arrayBuffer());
}

/** fsck at no minimum age: every stored file is judged. */
async function fsck() {
  return checkStorage(db, real, { now: Date.now() + 1000, minAgeMs: 0 });
}

describe('two PUTs of one upload whose bodies both reach the store', () => {
  it('a body whose store completes after another PUT received the upload replaces nothing: the 200 PUT’s body is the item', async () => {
    const t = await ticket();
    const held = gateA.hold();
    const first = t.put(a, png);
    await held.reached;
    await voidClaim(t.id);
    const second = await t.put(b, other);
    expect(second.status).toBe(200);
    held.release();
    const late = await first;
    expect(late.status).toBe(400);
    expect(late.message).toMatch(/taken over by another request/);

    const stored = await storedFor(t.id);
    expect((await completedBytes(t.id)).equals(other)).toBe(true);
    // Before the completion: the kept body only, under the key its row records; the other is gone.
    expect(stored.keys).toEqual([stored.recorded]);
    expect(await a.storedKeys(`uploads/${t.id}/`)).toEqual([]);
    expect([...(await a.leftovers()), ...(await b.leftovers())]).toEqual([]);
    expect(await fsck()).toMatchObject({ orphans: [], lostUploads: [] });
  });

  it('the first PUT to mark the upload keeps it, although the other’s store completes after: its body is the item', async () => {
    const t = await ticket();
    const heldA = gateA.hold();
    const first = t.put(a, png);
    await heldA.reached;
    await voidClaim(t.id);
    const heldB = gateB.hold();
    const second = t.put(b, other);
    // Node B claimed the upload and confirmed its claim: both bodies are at the store's door.
    await heldB.reached;
    heldA.release();
    expect((await first).status).toBe(200);
    heldB.release();
    const late = await second;
    expect(late.status).toBe(400);
    expect(late.message).toMatch(/taken over by another request/);

    const stored = await storedFor(t.id);
    expect((await completedBytes(t.id)).equals(png)).toBe(true);
    expect(stored.keys).toEqual([stored.recorded]);
    expect([...(await a.leftovers()), ...(await b.leftovers())]).toEqual([]);
    expect(await fsck()).toMatchObject({ orphans: [], lostUploads: [] });
  });

  it('a losing body its PUT could not delete (its node died first) is an orphan: fsck lists it, --repair removes it and keeps the received one', async () => {
    const t = await ticket();
    expect((await t.put(a, png)).status).toBe(200);
    const stray = uploadPutKey(t.id, newPutId());
    await real.putStream(stray, Readable.from([other]), { contentType: 'image/png', maxBytes: other.length });
    const report = await fsck();
    expect(report.orphans.map((o) => o.key)).toEqual([stray]);
    expect(report.lostUploads).toEqual([]);
    expect(await repairStorage(db, real, report)).toMatchObject({ removedFiles: 1, resetUploads: 0 });
    expect((await keptBody(t.id)).equals(png)).toBe(true);
    expect((await completedBytes(t.id)).equals(png)).toBe(true);
  });

  it('an upload received before rows recorded the key (uploads/<id>/data) is found there: fsck knows it, completion takes it', async () => {
    const t = await ticket();
    expect((await t.put(a, png)).status).toBe(200);
    const recorded = await recordedKey(t.id);
    expect(recorded).toMatch(new RegExp(`^uploads/${t.id}/put-[0-9a-f]{24}$`));
    // Where a build before the key was recorded kept the bytes, and the row it wrote.
    const legacy = `uploads/${t.id}/data`;
    await real.move(recorded!, legacy, { contentType: 'image/png' });
    await db.run('UPDATE uploads SET received_key = NULL WHERE id = ?', t.id);
    expect(await fsck()).toMatchObject({ orphans: [], lostUploads: [] });
    expect((await completedBytes(t.id)).equals(png)).toBe(true);
    expect(await a.storedKeys(`uploads/${t.id}/`)).toEqual([]);
  });

  it('the retention sweep removes an expired upload with every body stored under it', async () => {
    const t = await ticket();
    const stray = uploadPutKey(t.id, newPutId());
    await real.putStream(stray, Readable.from([other]), { contentType: 'image/png', maxBytes: other.length });
    // Past the signed URL's expiry: the pending upload goes, and the body no row named with it.
    a.clock.advance(16 * 60_000);
    await a.service.sweepRetention();
    expect(await db.get('SELECT id FROM uploads WHERE id = ?', t.id)).toBeUndefined();
    expect(await a.storedKeys(`uploads/${t.id}/`)).toEqual([]);
  });
});
