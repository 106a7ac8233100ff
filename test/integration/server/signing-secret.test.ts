import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../../../server/index.ts';
import { clientFor, makePng, onPostgres, openTestDatabase, startTestService, testDatabaseFor } from './helpers.ts';
import type { TestService } from './helpers.ts';

/**
 * On PostgreSQL the URL signing secret lives in the database, so every node signs and verifies
 * alike, and a node that brings another secret of its own is refused at start. (On SQLite the
 * secret is the data directory's secret.key, one node's: this file runs on the PostgreSQL pass.)
 */
let a: TestService;
let c: TestService;
const dirs: string[] = [];
beforeAll(async () => {
  if (!onPostgres) return;
  a = await startTestService();
  // Node C: the same database and the same files. With them in a bucket (the PostgreSQL pass's
  // S3), a data directory of its own, as on another machine; on disk, the same data directory.
  const database = await testDatabaseFor(a.dataDir);
  c =
    a.storage === 's3'
      ? await startTestService({ clock: a.clock, database, store: a.store })
      : await startTestService({ dataDir: a.dataDir, clock: a.clock, dataFolderLock: false });
});
afterAll(async () => {
  if (!onPostgres) return;
  if (a.storage === 's3') await c.stop();
  else await c.service.close();
  await a.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe.skipIf(!onPostgres)('the URL signing secret in the database', () => {
  it('a node whose own secret.key differs is refused at start, saying why', async () => {
    const database = await testDatabaseFor(a.dataDir);
    const own = await mkdtemp(join(tmpdir(), 'clipdesk-other-secret-'));
    dirs.push(own);
    await writeFile(join(own, 'secret.key'), `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    await expect(startService({ dataDir: own, sweepIntervalMs: 0, providerEnv: {}, database })).rejects.toThrow(
      /the URL signing secret in .*secret\.key differs from the one in the PostgreSQL database postgres:\/\/postgres@127\.0\.0\.1:\d+\/svc_\d+_\d+/,
    );
    // The same secret as the database's is welcome.
    const same = await mkdtemp(join(tmpdir(), 'clipdesk-same-secret-'));
    dirs.push(same);
    const db = await openTestDatabase(a.dataDir);
    const stored = await db.get<{ value: string }>("SELECT value FROM settings WHERE name = 'url_signing_secret'");
    await db.close();
    await writeFile(join(same, 'secret.key'), `${stored!.value}\n`, { mode: 0o600 });
    const node = await startService({ dataDir: same, sweepIntervalMs: 0, providerEnv: {}, database });
    await node.close();
    expect(await readFile(join(same, 'secret.key'), 'utf8')).toBe(`${stored!.value}\n`);
  });

  it('an upload URL signed by node A is PUT to node C and completed on node A', async () => {
    const created = await a.service.createKey({ user: 'across', tier: 'pro' });
    const onA = clientFor(a.service.url, created.key);
    const png = await readFile(await makePng(a.dataDir, 'across.png'));
    const ticket = await onA.call('POST', '/media/upload', {
      filename: 'across.png',
      mime: 'image/png',
      size: png.length,
    });
    expect(ticket.status).toBe(200);
    const signed = new URL(ticket.body.result.uploadUrl as string);
    const toC = `${new URL(c.service.url).origin}${signed.pathname}${signed.search}`;
    const put = await fetch(toC, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: png });
    expect(put.status).toBe(200);
    const done = await onA.call('POST', `/media/${ticket.body.result.id as string}`);
    expect(done.status).toBe(200);
    // A file URL signed by A opens on C.
    const url = new URL(done.body.result.url as string);
    const file = await fetch(`${new URL(c.service.url).origin}${url.pathname}${url.search}`);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
  });
});
