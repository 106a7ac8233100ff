import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.ts';
import { setAccountLimits } from '../../../server/limits/account-limits.ts';
import { writeKeyFile } from '../../../server/providers/provider-keys.ts';
import { createDiskBlobStore } from '../../../server/storage/blobs/index.ts';
import type { BlobStore } from '../../../server/storage/blobs/index.ts';
import { createS3BlobStore } from '../../../server/storage/blobs/s3.ts';
import { openServiceDatabase } from '../../../server/storage/db.ts';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import type { Manifest } from '../../../server/storage/transfer/bundle.ts';
import { MOVED_TABLES } from '../../../server/storage/transfer/tables.ts';
import { postgresUnavailable, startPostgres } from '../../support/postgres.ts';
import { runServiceCli as cli } from '../../support/service-process.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import { startS3 } from '../../support/s3.ts';
import type { TestS3 } from '../../support/s3.ts';
import { SMALL_VIDEO, clientFor, generated, listed, makePng, onPostgres, single, startTestService } from './helpers.ts';
import type { ApiResponse, TestClient, TestService } from './helpers.ts';

/**
 * A move to another machine (docs/service.md): a one-machine service (SQLite and disk) with keys, users, limits, items of each
 * kind, uploads received and pending, usage, idempotency, an asynchronous generation and its
 * webhook delivery is exported with `clipdesk-service export`, imported with `import` into
 * PostgreSQL and S3 (a private cluster and s3rver), and compared: every moved table's rows, every
 * stored file's sha256, the listing through a `serve` on the target with the old key, and a file
 * URL signed before the move. Then the bad bundles and targets import must refuse.
 *
 * It starts its own cluster, so it runs in the node project only: the PostgreSQL pass skips it.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');

/** A made-up provider key: it must not reach the bundle. */
const PROVIDER_KEY = 'fal-test-key-0123456789abcdef';

const unavailable = postgresUnavailable();
if (unavailable) console.log(`skipping export/import into PostgreSQL: ${unavailable}`);

/** `clipdesk-service serve` on the target, until `stop()`. */
async function serveTarget(args: string[], env: NodeJS.ProcessEnv): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: ROOT, env });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /listening on (\S+)/.exec(stdout);
      if (m) resolveUrl(m[1]!);
    });
    child.once('close', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function sha256Of(store: BlobStore, key: string): Promise<string> {
  const read = await store.get(key);
  const hash = createHash('sha256');
  for await (const chunk of read.stream as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** Every stored file's sha256, by key. */
async function storedHashes(store: BlobStore): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const area of ['media/', 'uploads/'])
    for await (const blob of store.list(area)) out[blob.key] = await sha256Of(store, blob.key);
  return out;
}

/** A table's rows in the manifest's columns, in an order independent of either database's collation. */
async function rowsOf(db: SqlDatabase, table: string, columns: string[]): Promise<string[]> {
  const rows = await db.all<Record<string, unknown>>(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM ${table}`);
  return rows.map((r) => JSON.stringify(columns.map((c) => r[c]))).sort();
}

async function count(db: SqlDatabase, table: string): Promise<number> {
  return Number((await db.get<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))?.n);
}

async function waitFor(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function ok(res: ApiResponse, what: string): ApiResponse {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

let source: TestService;
let cluster: PrivatePostgres;
let s3: TestS3;
let receiver: Server;
const temps: string[] = [];
let bundle: string;
let alice: TestClient;
let bob: TestClient;
/** What the source answered before the move. */
const before: {
  aliceIds: string[];
  aliceTotal: number;
  bobIds: string[];
  signedUrl: string;
  signedBytes: string;
  /** The upload received and not completed. */
  receivedUpload: string;
} = {
  aliceIds: [],
  aliceTotal: 0,
  bobIds: [],
  signedUrl: '',
  signedBytes: '',
  receivedUpload: '',
};

async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `clipdesk-${label}-`));
  temps.push(dir);
  return dir;
}

function s3Env(): NodeJS.ProcessEnv {
  return { ...process.env, ...s3.env };
}

/** A target: a new PostgreSQL database and a new prefix in the bucket. */
async function newTarget(
  name: string,
): Promise<{ url: string; storage: string; store: BlobStore & { close(): void } }> {
  const url = await cluster.createDatabase(name);
  return {
    url,
    storage: `s3://${s3.bucket}/${name}`,
    store: createS3BlobStore({ bucket: s3.bucket, prefix: name, client: s3.client() }),
  };
}

describe.skipIf(unavailable !== null || onPostgres)('export from one machine, import into PostgreSQL and S3', () => {
  beforeAll(async () => {
    [cluster, s3] = await Promise.all([startPostgres(), startS3({ bucket: 'clipdesk-moved' })]);
    const deliveries: string[] = [];
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        deliveries.push(req.url ?? '');
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

    // Real time: the target's serve runs on the wall clock, and retention must not find the items expired.
    source = await startTestService({
      storage: 'disk',
      clock: new ManualClock(Date.now()),
      allowPrivateWebhooks: true,
    });
    alice = await source.client('alice', 'pro');
    bob = await source.client('bob', 'free');
    const db = await openServiceDatabase({ kind: 'sqlite', dataDir: source.dataDir });
    expect(await setAccountLimits(db, 'alice', { rpm: 600, storageBytes: 5_000_000_000 })).toBe(true);
    await db.close();

    // A video (charged once under its Idempotency-Key), an image, an asynchronous image with a webhook.
    const video = generated(
      ok(
        await alice.call(
          'POST',
          '/videos/generations',
          { ...SMALL_VIDEO, prompt: 'a paper boat on a stormy sea' },
          { 'idempotency-key': 'boat-1' },
        ),
        'video',
      ).body,
    )[0]!;
    ok(
      await bob.call('POST', '/images/generations', { model: 'clipdesk/still', prompt: 'a pebble', size: '256x256' }),
      'image',
    );
    const queued = ok(
      await alice.call(
        'POST',
        '/images/generations',
        { model: 'clipdesk/still', prompt: 'a kite over dunes', size: '256x256', webhook_url: hook },
        { prefer: 'respond-async' },
      ),
      'async image',
    );
    const generationId = queued.body.result.id as string;
    await waitFor(
      async () => (await alice.call('GET', `/generations/${generationId}`)).body.result.status === 'succeeded',
      'the asynchronous generation',
    );
    await waitFor(() => deliveries.length === 1, 'the webhook delivery');

    // Uploads: one completed into an item, one received and not completed, one ticket never used.
    const png = await readFile(await makePng(source.dataDir, 'upload.png'));
    const tickets = [];
    for (const name of ['done.png', 'received.png', 'pending.png'])
      tickets.push(
        ok(await alice.call('POST', '/media/upload', { filename: name, mime: 'image/png', size: png.length }), name)
          .body.result as { id: string; uploadUrl: string },
      );
    for (const ticket of tickets.slice(0, 2)) {
      const put = await fetch(ticket.uploadUrl, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: png });
      expect(put.status).toBe(200);
    }
    expect(single(ok(await alice.call('POST', `/media/${tickets[0]!.id}`), 'complete').body).media).toBe('image');
    before.receivedUpload = tickets[1]!.id;

    const aliceList = ok(await alice.call('GET', '/media?limit=100'), 'list').body;
    before.aliceIds = listed(aliceList).map((m) => m.id);
    before.aliceTotal = aliceList.result.total as number;
    before.bobIds = listed(ok(await bob.call('GET', '/media?limit=100'), 'list').body).map((m) => m.id);
    before.signedUrl = video.url;
    before.signedBytes = createHash('sha256')
      .update(Buffer.from(await (await fetch(video.url)).arrayBuffer()))
      .digest('hex');
    // Her three items, and what else she may see (public items).
    expect(before.aliceIds).toContain(video.id);
    expect(before.aliceIds.length).toBeGreaterThanOrEqual(3);
    await source.service.close();
    // A provider key set with `providers set-key`: named by export and import, never in the bundle.
    await writeKeyFile(source.dataDir, { fal: PROVIDER_KEY });

    bundle = join(await tempDir('bundle'), 'bundle');
    const exported = await cli(['export', '--data', source.dataDir, '--out', bundle]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/^media: 4 rows$/m);
    expect(exported.stderr).toMatch(
      /provider keys are not exported: fal had a key set .* Set FAL_KEY in every team node's environment/,
    );
    for (const file of await readdir(bundle, { recursive: true, withFileTypes: true }))
      if (file.isFile()) expect((await readFile(join(file.parentPath, file.name))).includes(PROVIDER_KEY)).toBe(false);
  }, 180_000);

  afterAll(async () => {
    await new Promise((r) => receiver?.close(r));
    await source?.stop();
    await Promise.all([cluster?.stop(), s3?.stop()]);
    for (const d of temps) await rm(d, { recursive: true, force: true });
  });

  it('moves every row and file: the same rows per table, the same sha256 per file; the old key and an old signed URL work on the target', async () => {
    const target = await newTarget('moved');
    const targetData = await tempDir('node');
    const imported = await cli(
      ['import', '--from', bundle, '--database', target.url, '--storage', target.storage, '--data', targetData],
      s3Env(),
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/every count and sha256 verified/);
    expect(imported.stderr).toMatch(/provider keys are not in the bundle: fal had a key set/);

    const manifest = JSON.parse(await readFile(join(bundle, 'manifest.json'), 'utf8')) as Manifest;
    const from = await openServiceDatabase({ kind: 'sqlite', dataDir: source.dataDir }, { migrate: false });
    const to = await openServiceDatabase({ kind: 'postgres', url: target.url }, { migrate: false });
    try {
      for (const table of MOVED_TABLES) {
        const { columns } = manifest.tables.find((t) => t.name === table.name)!;
        const sourceRows = await rowsOf(from, table.name, columns);
        const targetRows = await rowsOf(to, table.name, columns);
        if (table.name === 'settings') {
          // The target's settings also hold the signing secret (SQLite kept it in secret.key).
          const secret = (await readFile(join(source.dataDir, 'secret.key'), 'utf8')).trim();
          expect(targetRows).toEqual([...sourceRows, JSON.stringify(['url_signing_secret', secret])].sort());
        } else {
          expect(targetRows, table.name).toEqual(sourceRows);
        }
      }
      // Every table this service filled is in the comparison, not only empty ones.
      for (const table of ['users', 'api_keys', 'user_limits', 'media', 'uploads', 'idempotency', 'generations'])
        expect(await count(from, table), table).toBeGreaterThan(0);
      for (const table of ['webhook_deliveries', 'rate_counters'])
        expect(await count(from, table), table).toBeGreaterThan(0);
      expect(await count(to, 'uploads')).toBe(3);
      // The listing's counters, kept by the target's triggers, add up to its items.
      const counted = await to.get<{ n: number }>('SELECT coalesce(sum(n), 0) AS n FROM media_counts');
      expect(Number(counted?.n)).toBe(4);
    } finally {
      await from.close();
      await to.close();
    }

    const sourceFiles = await storedHashes(createDiskBlobStore(source.dataDir));
    const targetFiles = await storedHashes(target.store);
    target.store.close();
    // Four items' renditions and thumbnails, and the one received upload's bytes (under its PUT's key).
    expect(Object.keys(sourceFiles).filter((k) => k.startsWith('uploads/'))).toEqual([
      expect.stringMatching(new RegExp(`^uploads/${before.receivedUpload}/put-[0-9a-f]{24}$`)),
    ]);
    expect(Object.keys(sourceFiles).length).toBeGreaterThan(8);
    expect(targetFiles).toEqual(sourceFiles);

    const node = await serveTarget(
      ['--database', target.url, '--storage', target.storage, '--data', await tempDir('serve')],
      s3Env(),
    );
    try {
      const onTarget = clientFor(`${node.url}`, alice.key);
      const list = ok(await onTarget.call('GET', '/media?limit=100'), 'list on the target').body;
      expect(listed(list).map((m) => m.id)).toEqual(before.aliceIds);
      expect(list.result.total).toBe(before.aliceTotal);
      const bobList = ok(await clientFor(node.url, bob.key).call('GET', '/media?limit=100'), 'bob').body;
      expect(listed(bobList).map((m) => m.id)).toEqual(before.bobIds);
      // A URL signed by the one-machine service, asked of the team node: same path and signature.
      const old = new URL(before.signedUrl);
      const moved = new URL(`${old.pathname}${old.search}`, node.url);
      const res = await fetch(moved);
      expect(res.status).toBe(200);
      expect(
        createHash('sha256')
          .update(Buffer.from(await res.arrayBuffer()))
          .digest('hex'),
      ).toBe(before.signedBytes);
      // The received upload's row names the key its bytes moved under: it completes on the target.
      const completed = await onTarget.call('POST', `/media/${before.receivedUpload}`);
      expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    } finally {
      await node.stop();
    }

    // The same target again: it holds data now.
    const again = await cli(
      ['import', '--from', bundle, '--database', target.url, '--storage', target.storage],
      s3Env(),
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds data \(its users table has rows\)/);
  });

  it('a damaged file in the bundle: refused, no row committed, no file left; a run with the intact bundle then succeeds', async () => {
    const damaged = join(await tempDir('damaged'), 'bundle');
    await cp(bundle, damaged, { recursive: true });
    // The last file listed, so that others were stored before it and must be removed again.
    const entries = (await readFile(join(damaged, 'files.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { key: string });
    const victim = join(damaged, 'files', ...entries.at(-1)!.key.split('/'));
    const bytes = await readFile(victim);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
    await writeFile(victim, bytes);

    const target = await newTarget('damaged');
    const refused = await cli(
      ['import', '--from', damaged, '--database', target.url, '--storage', target.storage],
      s3Env(),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the bundle is refused, nothing was imported: files\/\S+ does not match its sha256/);
    const db = await openServiceDatabase({ kind: 'postgres', url: target.url }, { migrate: false });
    try {
      for (const table of MOVED_TABLES) expect(await count(db, table.name), table.name).toBe(0);
    } finally {
      await db.close();
    }
    expect(await storedHashes(target.store)).toEqual({});

    const rerun = await cli(
      ['import', '--from', bundle, '--database', target.url, '--storage', target.storage],
      s3Env(),
    );
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(Object.keys(await storedHashes(target.store))).toHaveLength(entries.length);
    target.store.close();
  });

  it('a truncated manifest: refused before the target is touched', async () => {
    const cut = join(await tempDir('cut'), 'bundle');
    await cp(bundle, cut, { recursive: true });
    const manifest = join(cut, 'manifest.json');
    await truncate(manifest, Math.floor((await readFile(manifest)).length / 2));
    const target = await newTarget('cut');
    const refused = await cli(
      ['import', '--from', cut, '--database', target.url, '--storage', target.storage],
      s3Env(),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/manifest\.json is not valid JSON \(truncated or damaged\)/);
    const db = await openServiceDatabase({ kind: 'postgres', url: target.url }, { migrate: false }).catch(
      (error: Error) => error,
    );
    // Not even migrated: the database is as it was.
    expect(db).toBeInstanceOf(Error);
    expect(await storedHashes(target.store)).toEqual({});
    target.store.close();
  });

  it('a rows file that does not match the manifest: refused before any file is stored', async () => {
    const changed = join(await tempDir('rows'), 'bundle');
    await cp(bundle, changed, { recursive: true });
    const users = join(changed, 'rows', 'users.ndjson');
    await writeFile(users, (await readFile(users, 'utf8')).replace('"free"', '"enterprise"'));
    const target = await newTarget('rows');
    const refused = await cli(
      ['import', '--from', changed, '--database', target.url, '--storage', target.storage],
      s3Env(),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/rows\/users\.ndjson does not match its sha256/);
    expect(await storedHashes(target.store)).toEqual({});
    target.store.close();
  });
});
