import { request } from 'node:http';
import type { ClientRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import { RECEIVE_CLAIM_MS } from '../../../server/uploads/receive-claim.ts';
import { makePng, onPostgres, pngUploadTicket, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * A PUT streaming across a PostgreSQL restart: the restart voids its claim on the upload (so that a
 * URL whose PUT failed with the database works again at once), and a second PUT, on another node,
 * may then claim the same upload. The first must notice — at its next renewal, or at the latest when
 * its body has arrived, before the store keeps anything — and stop: exactly one PUT completes, and
 * the stored bytes are the winner's, with nothing half-done left behind.
 */
describe.runIf(onPostgres)('an upload claim across a database restart', () => {
  let cluster: PrivatePostgres;
  let database: string;
  let a: TestService;
  let b: TestService;
  let c: TestClient;
  let png: Buffer;
  /** The same size and type as `png`, other bytes: which PUT's body was kept shows. */
  let other: Buffer;
  beforeAll(async () => {
    cluster = await startPostgres();
    database = await cluster.createDatabase('claim_restart');
    a = await startTestService({ database, nodes: 1 });
    b = await startTestService({ database, dataDir: a.dataDir, clock: a.clock, nodes: 1, dataFolderLock: false });
    c = await a.client('claim-restart');
    png = await readFile(await makePng(a.dataDir, 'restart.png', '64x48', 'olive'));
    other = Buffer.from(png);
    // Past the leading bytes sniffing reads: the same type, another body.
    other[other.length - 5] = (other[other.length - 5]! + 1) % 256;
  });
  afterAll(async () => {
    await b?.service.close();
    await a?.stop();
    await cluster?.stop();
  });

  async function ticket(): Promise<{ id: string; onA: string; onB: string; headers: Record<string, string> }> {
    const { id, headers, urlOn } = await pngUploadTicket(c, 'restart.png', png.length);
    return { id, onA: urlOn(a.service.url), onB: urlOn(b.service.url), headers };
  }

  /** A PUT that has sent the first half of `body` and waits for `finish()`; `answer` settles with its response. */
  function halfPut(url: string, headers: Record<string, string>, body: Buffer) {
    let req!: ClientRequest;
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req = request(url, { method: 'PUT', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
    });
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half));
    return { answer, finish: () => req.end(body.subarray(half)) };
  }

  /**
   * Resolves with the holder of upload `id`'s claim (its row in `leases`) once there is one other
   * than `previous`: the PUT holding it is streaming.
   */
  async function claimed(id: string, previous: string | null = null): Promise<string> {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      for (let waited = 0; ; waited += 10) {
        const { rows } = await client.query<{ node: string }>('SELECT node FROM leases WHERE name = $1', [
          `upload:${id}`,
        ]);
        const holder = rows[0]?.node;
        if (holder !== undefined && holder !== previous) return holder;
        if (waited > 10_000) throw new Error(`upload ${id} was not claimed within 10 s`);
        await new Promise((done) => setTimeout(done, 10));
      }
    } finally {
      await client.end();
    }
  }

  async function restartDatabase(): Promise<void> {
    await cluster.halt();
    await cluster.resume();
  }

  /** The one body stored for upload `id`, which must be under the key its row records. */
  async function storedBody(id: string): Promise<Buffer> {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    let recorded: string | null | undefined;
    try {
      const { rows } = await client.query<{ received_key: string | null }>(
        'SELECT received_key FROM uploads WHERE id = $1',
        [id],
      );
      recorded = rows[0]?.received_key;
    } finally {
      await client.end();
    }
    expect(await a.storedKeys(`uploads/${id}/`)).toEqual([recorded]);
    return buffer((await a.store.get(recorded!)).stream);
  }

  /** PUTs `body` to `url`, again while the node's pool still holds connections the restart cut. */
  async function putAfterRestart(url: string, headers: Record<string, string>, body: Buffer): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(url, { method: 'PUT', body: new Uint8Array(body), headers });
      if (res.status !== 503 || attempt === 5) return res;
      await new Promise((done) => setTimeout(done, 200));
    }
  }

  it('the first PUT whose body ends after a second PUT took over and completed is refused, keeps nothing; the second’s bytes stay', async () => {
    const t = await ticket();
    const first = halfPut(t.onA, t.headers, png);
    await claimed(t.id);
    await restartDatabase();
    const second = await putAfterRestart(t.onB, t.headers, other);
    expect(second.status).toBe(200);
    first.finish();
    const answer = await first.answer;
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({
      code: 'invalid_request_error',
      message: expect.stringMatching(/taken over by another request/),
    });
    expect((await storedBody(t.id)).equals(other)).toBe(true);
    expect([...(await a.leftovers()), ...(await b.leftovers())]).toEqual([]);
    expect((await c.call('POST', `/media/${t.id}`)).status).toBe(200);
  });

  it(
    'the first PUT stops at its next renewal once a second PUT holds the upload, before its body ends; the second completes',
    async () => {
      const t = await ticket();
      const first = halfPut(t.onA, t.headers, png);
      const firstHolder = await claimed(t.id);
      await restartDatabase();
      let second: ReturnType<typeof halfPut> | null = null;
      for (let attempt = 0; attempt < 5 && second === null; attempt++) {
        const put = halfPut(t.onB, t.headers, other);
        // Answered before it claimed: a connection the restart cut (503); it is tried again.
        const early = await Promise.race([put.answer, claimed(t.id, firstHolder).then(() => null)]);
        if (early === null) second = put;
        else expect(early.status).toBe(503);
      }
      if (!second) throw new Error('the second PUT could not claim the upload');
      // Node A renews every third of the claim's length: it finds another holder and stops.
      const answer = await first.answer;
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text).message).toMatch(/taken over by another request/);
      second.finish();
      expect((await second.answer).status).toBe(200);
      expect((await storedBody(t.id)).equals(other)).toBe(true);
      expect([...(await a.leftovers()), ...(await b.leftovers())]).toEqual([]);
    },
    RECEIVE_CLAIM_MS,
  );
});
