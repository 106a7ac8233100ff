import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../shared/clock.ts';
import { openDatabase } from '../../../server/storage/db.ts';
import { SERVICE_SCHEMA_VERSION } from '../../../server/storage/sqlite-migrations.ts';
import type { BlobStore } from '../../../server/storage/blobs/index.ts';
import type { Manifest } from '../../../server/storage/transfer/bundle.ts';
import { ExportError, exportService } from '../../../server/storage/transfer/export.ts';
import { generated, onPostgres, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * `export` while the one-machine service keeps running: it reads one snapshot, so an item the
 * service commits meanwhile is not half in the bundle, the service is never blocked by it, and a
 * file deleted under it (retention racing the export) fails the export, leaving no bundle.
 * (SQLite only: the PostgreSQL pass skips it.)
 */
let t: TestService;
let c: TestClient;
const dirs: string[] = [];
beforeAll(async () => {
  if (onPostgres) return;
  t = await startTestService({ storage: 'disk', clock: new ManualClock(Date.now()) });
  c = await t.client('snap', 'pro');
  const first = await c.call('POST', '/images/generations', {
    model: 'clipdesk/still',
    prompt: 'first',
    size: '256x256',
  });
  expect(first.status).toBe(200);
});
afterAll(async () => {
  await t?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function newOut(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-snapshot-'));
  dirs.push(dir);
  return join(dir, 'bundle');
}

/** The service's store, with `onGet` run before the first read of a file. */
function storeWith(onGet: (key: string) => Promise<void>): BlobStore {
  let done = false;
  return {
    ...t.store,
    async get(key, options) {
      if (!done) {
        done = true;
        await onGet(key);
      }
      return t.store.get(key, options);
    },
  };
}

async function runExport(store: BlobStore, out: string) {
  const db = openDatabase(t.dataDir, { migrate: false });
  try {
    return await exportService({
      raw: db.raw,
      schemaVersion: SERVICE_SCHEMA_VERSION,
      databaseDescription: db.description,
      store,
      dataDir: t.dataDir,
      out,
      providersWithKeys: [],
      now: new Date(),
    });
  } finally {
    await db.close();
  }
}

describe.skipIf(onPostgres)('export while the service runs', () => {
  it('an item committed during the export is not in the bundle; the service was not blocked', async () => {
    const out = await newOut();
    let second = '';
    const { manifest } = await runExport(
      storeWith(async () => {
        // The service generates and commits a whole item while the export holds its snapshot.
        const res = await c.call('POST', '/images/generations', {
          model: 'clipdesk/still',
          prompt: 'second',
          size: '256x256',
        });
        expect(res.status).toBe(200);
        second = generated(res.body)[0]!.id;
      }),
      out,
    );
    expect(second).toMatch(/^med_/);
    expect(manifest.tables.find((m) => m.name === 'media')?.rows).toBe(1);
    const rows = await readFile(join(out, 'rows', 'media.ndjson'), 'utf8');
    expect(rows).not.toContain(second);
    const index = await readFile(join(out, 'files.ndjson'), 'utf8');
    expect(index).not.toContain(second);
    const written = JSON.parse(await readFile(join(out, 'manifest.json'), 'utf8')) as Manifest;
    expect(written.files.count).toBeGreaterThan(0);
  });

  it('a file deleted under the export (retention racing it) fails it, naming the file, and leaves no bundle', async () => {
    const out = await newOut();
    const failed = await runExport(
      storeWith((key) => t.store.delete(key)),
      out,
    ).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ExportError);
    expect((failed as Error).message).toMatch(
      /media\/med_\w+\/\S+ is named by a row but missing from disk:.*deleted since the export began/,
    );
    expect(existsSync(out)).toBe(false);
  });
});
