import { request } from 'node:http';
import type { ClientRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { NODE_ID_FILE } from '../../../server/uploads/claim-node.ts';
import { RECEIVE_CLAIM_MS } from '../../../server/uploads/receive-claim.ts';
import { serverRunSql } from '../../../server/storage/sql/dialect.ts';
import { makePng, openTestDatabase, pngUploadTicket, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * One upload received by one PUT at a time across nodes: two services on one database and one data
 * directory (disk storage: a PUT's work file under tmp/ shows it is streaming), the upload URL
 * sent to each node in turn. The claim lives in the database, so the second node sees the first's.
 */
let a: TestService;
let b: TestService;
let c: TestClient;
let png: Buffer;
beforeAll(async () => {
  a = await startTestService({ nodes: 1, storage: 'disk' });
  b = await startTestService({ dataDir: a.dataDir, clock: a.clock, nodes: 1, storage: 'disk', dataFolderLock: false });
  c = await a.client('claiming-uploader');
  png = await readFile(await makePng(a.dataDir, 'claimed.png', '64x48', 'teal'));
});
afterAll(async () => {
  await b?.service.close();
  await a?.stop();
});

interface Ticket {
  id: string;
  /** The signed URL on node A, and the same URL on node B. */
  onA: string;
  onB: string;
  headers: Record<string, string>;
}

async function ticket(): Promise<Ticket> {
  const { id, headers, urlOn } = await pngUploadTicket(c, 'claimed.png', png.length);
  return { id, onA: urlOn(a.service.url), onB: urlOn(b.service.url), headers };
}

/** A PUT that has sent half its body and waits; resolves with its status once `end()` is called. */
function halfPut(url: string, headers: Record<string, string>): { req: ClientRequest; status: Promise<number> } {
  let req!: ClientRequest;
  const status = new Promise<number>((resolve, reject) => {
    req = request(url, { method: 'PUT', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(png.subarray(0, Math.floor(png.length / 2)));
  return { req, status };
}

/** Resolves once node A's PUT is streaming (its work file is under tmp/). */
async function streaming(): Promise<void> {
  for (let waited = 0; (await a.leftovers()).length === 0; waited += 10) {
    if (waited > 10_000) throw new Error('the first PUT did not start streaming within 10 s');
    await new Promise((done) => setTimeout(done, 10));
  }
}

describe('an upload received by one node at a time', () => {
  it('a PUT on node B while node A receives the same upload is refused; A completes it; B then finds it received', async () => {
    const t = await ticket();
    const first = halfPut(t.onA, t.headers);
    await streaming();
    const second = await fetch(t.onB, { method: 'PUT', body: new Uint8Array(png), headers: t.headers });
    // Busy, not wrong: 409, with how long to wait and what for.
    expect(second.status).toBe(409);
    const wait = Number(second.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(RECEIVE_CLAIM_MS / 1000);
    expect(await second.json()).toMatchObject({
      code: 'conflict',
      retry_after: wait,
      message: expect.stringMatching(/being received by another PUT; retry after \d+ s: it waits for that PUT to end/),
    });
    first.req.end(png.subarray(Math.floor(png.length / 2)));
    expect(await first.status).toBe(200);
    const third = await fetch(t.onB, { method: 'PUT', body: new Uint8Array(png), headers: t.headers });
    expect(third.status).toBe(400);
    expect(await third.json()).toMatchObject({ message: expect.stringMatching(/already been received/) });
    expect((await c.call('POST', `/media/${t.id}`)).status).toBe(200);
  });

  it('a PUT on node A whose client goes away lets go of the upload: node B receives it long before the claim would lapse', async () => {
    const t = await ticket();
    const first = halfPut(t.onA, t.headers);
    first.status.catch(() => undefined);
    await streaming();
    const left = Date.now();
    first.req.destroy();
    // Node A lets go once it has noticed the disconnect; until then B is refused as above.
    let again: Response;
    for (;;) {
      again = await fetch(t.onB, { method: 'PUT', body: new Uint8Array(png), headers: t.headers });
      if (again.status !== 409 || Date.now() - left > 5_000) break;
      await new Promise((done) => setTimeout(done, 20));
    }
    expect(again.status).toBe(200);
    // Let go of, not lapsed: the claim lasts RECEIVE_CLAIM_MS (30 s).
    expect(Date.now() - left).toBeLessThan(RECEIVE_CLAIM_MS / 2);
  });

  it('a sweep removes the claim rows whose lease lapsed (a PUT killed with its node), and leaves a streaming PUT’s claim', async () => {
    const t = await ticket();
    const first = halfPut(t.onA, t.headers);
    await streaming();
    const db = await openTestDatabase(a.dataDir);
    try {
      // What a node killed mid-PUT leaves: its claim, never let go of, lapsed since.
      await db.run(
        'INSERT INTO leases (name, node, lease_until) VALUES (?, ?, ?)',
        'upload:up_killed_mid_put',
        '|killed',
        Date.now() - 1,
      );
      await a.service.sweepRetention();
      const claims = await db.all<{ name: string }>("SELECT name FROM leases WHERE name LIKE 'upload:%' ORDER BY name");
      expect(claims.map((r) => r.name)).toEqual([`upload:${t.id}`]);
    } finally {
      await db.close();
    }
    first.req.end(png.subarray(Math.floor(png.length / 2)));
    expect(await first.status).toBe(200);
  });
});

describe('an upload cut by a crash', () => {
  it("a node that starts clears its own earlier runs' claims: the resend right after is received", async () => {
    const t = await ticket();
    // What kill -9 mid-PUT leaves: the claim of an earlier run of this node, not lapsed yet.
    const nodeId = (await readFile(join(a.dataDir, NODE_ID_FILE), 'utf8')).trim();
    const db = await openTestDatabase(a.dataDir);
    try {
      // Held during this database server's run (the claim's prefix), as a claim of a live run is.
      await db.run(
        `INSERT INTO leases (name, node, lease_until) VALUES (?, ${serverRunSql(db.dialect)} || ?, ?)`,
        `upload:${t.id}`,
        `|${nodeId}.0123456789ab|put_killed`,
        Date.now() + RECEIVE_CLAIM_MS,
      );
    } finally {
      await db.close();
    }
    expect((await fetch(t.onA, { method: 'PUT', body: new Uint8Array(png), headers: t.headers })).status).toBe(409);
    // The node starts again (a service on its data directory, hence its node id).
    const restarted = await startTestService({
      dataDir: a.dataDir,
      clock: a.clock,
      nodes: 1,
      storage: 'disk',
      dataFolderLock: false,
    });
    try {
      const resent = await fetch(t.onA, { method: 'PUT', body: new Uint8Array(png), headers: t.headers });
      expect(resent.status).toBe(200);
    } finally {
      await restarted.service.close();
    }
  });
});
