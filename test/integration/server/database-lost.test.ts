import { request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from '../../support/postgres.ts';
import type { PrivatePostgres } from '../../support/postgres.ts';
import { randomUUID } from 'node:crypto';
import { databaseSlotStore } from '../../../server/limits/concurrency.ts';
import { SLOT_LEASE_MS } from '../../../server/limits/leased-rows.ts';
import { databaseReservations } from '../../../server/limits/storage-quota.ts';
import { openServiceDatabase } from '../../../server/storage/db.ts';
import { until, untilTrue } from '../../support/until.ts';
import { makePng, onPostgres, startTestService } from './helpers.ts';
import type { ApiResponse, TestService } from './helpers.ts';

/**
 * The database lost while the service serves (docs/service.md, "Object storage": faults): requests answer
 * 503 `provider_unavailable` with Retry-After (as when the file storage is lost), never 500; a file
 * stored before its row could be written does not stay behind; and once the database is back the
 * node serves again without a restart. On the PostgreSQL pass the cluster is really stopped
 * (`pg_ctl stop -m fast`: its connections terminated, then refused) and started again; on SQLite, another connection holds the write
 * lock past the service's busy timeout.
 */

function expectUnavailable(res: ApiResponse): void {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('5');
  expect(res.body.code).toBe('provider_unavailable');
  expect(res.body.retry_after).toBe(5);
  expect(res.body.message).toMatch(/database is unavailable/);
  // No internals: neither the driver's words nor where the database is.
  expect(res.body.message).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres|sqlite|locked/i);
}

/** PUTs `body` to `url` in two parts, running `between` after the first has been sent. */
function putInTwoParts(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  between: () => Promise<void>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const half = Math.floor(body.length / 2);
    req.write(body.subarray(0, half), () => {
      between().then(() => req.end(body.subarray(half)), reject);
    });
  });
}

/**
 * Resolves once a node of `database` has looked the upload up (`getUpload`, before it reads the
 * body), since `since`: stopping the cluster earlier would fail that lookup, not the marking of a
 * stored body as received. pg_stat_activity keeps each connection's last statement.
 */
async function uploadLookedUp(cluster: PrivatePostgres, database: string, since: Date): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    for (let waited = 0; ; waited += 10) {
      const { rowCount } = await client.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = $1 AND state = 'idle' AND query = 'SELECT * FROM uploads WHERE id = $1' AND state_change >= $2`,
        [database, since],
      );
      if (rowCount) return;
      if (waited > 10_000) throw new Error('no node looked the upload up within 10 s');
      await new Promise((done) => setTimeout(done, 10));
    }
  } finally {
    await client.end();
  }
}

describe.runIf(onPostgres)('PostgreSQL lost while serving', () => {
  let cluster: PrivatePostgres;
  let t: TestService;
  let png: Buffer;
  let database: string;
  /** What the node logged: the cause of each 503, shown when an assertion fails. */
  const logged: string[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
    database = await cluster.createDatabase('lost_while_serving');
    t = await startTestService({
      database,
      logger: { info: () => undefined, warn: (m) => logged.push(m), error: (m) => logged.push(m) },
    });
    png = await readFile(await makePng(t.dataDir, 'lost.png', '64x48', 'purple'));
  });
  afterAll(async () => {
    await t?.stop();
    await cluster?.stop();
  });

  it('GET /media answers 503 with Retry-After while the cluster is down, and 200 once it is back, on the same node', async () => {
    const c = await t.client('lost-lister');
    expect((await c.call('GET', '/media')).status).toBe(200);
    await cluster.halt();
    try {
      expectUnavailable(await c.call('GET', '/media'));
      expectUnavailable(await c.call('POST', '/media/upload', { filename: 'x.png', mime: 'image/png', size: 100 }));
      const ready = await fetch(`${t.service.url.replace(/\/v1$/, '')}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBe('5');
    } finally {
      await cluster.resume();
    }
    // The pool dropped the lost connections and opens new ones: no restart of the node.
    expect((await c.call('GET', '/media')).status, logged.join('\n')).toBe(200);
    expect((await fetch(`${t.service.url.replace(/\/v1$/, '')}/readyz`)).status).toBe(200);
  });

  it('an upload whose row cannot be marked received after its bytes were stored keeps no file; its URL works once the database is back', async () => {
    const c = await t.client('lost-uploader');
    const ticket = await c.call('POST', '/media/upload', { filename: 'lost.png', mime: 'image/png', size: png.length });
    expect(ticket.status).toBe(200);
    const { id, uploadUrl, headers } = ticket.body.result as {
      id: string;
      uploadUrl: string;
      headers: Record<string, string>;
    };
    // The stop is awaited before the cluster is started again, whatever the PUT's outcome: had the
    // node answered before the stop was over, a resume skipped or run meanwhile would leave the
    // cluster down for the rest of the file.
    let stopping: Promise<void> | null = null;
    let halted = false;
    const since = new Date();
    try {
      const put = await putInTwoParts(uploadUrl, png, headers, () => {
        stopping = (async () => {
          await uploadLookedUp(cluster, 'lost_while_serving', since);
          await cluster.halt();
          halted = true;
        })();
        return stopping;
      });
      expect(put.status).toBe(503);
      expect(put.headers['retry-after']).toBe('5');
      expect(JSON.parse(put.text).code).toBe('provider_unavailable');
      expect((await t.storedKeys('uploads/')).filter((k) => k.includes(id))).toEqual([]);
    } finally {
      await (stopping as Promise<void> | null)?.catch(() => undefined);
      if (halted) await cluster.resume();
    }
    const again = await fetch(uploadUrl, { method: 'PUT', body: new Uint8Array(png), headers });
    expect(again.status, logged.join('\n')).toBe(200);
    const done = await c.call('POST', `/media/${id}`);
    expect(done.status).toBe(200);
  });

  /** Rows of `table` whose lease has not lapsed: slots and reservations that count. */
  const live = async (table: 'running_slots' | 'storage_reservations'): Promise<number> => {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE lease_until > $1`, [
        Date.now(),
      ]);
      return Number(rows[0]?.n ?? 0);
    } finally {
      await client.end();
    }
  };

  it('a slot and a reservation whose release fails while the database is down are free within one lease, not renewed', async () => {
    const db = await openServiceDatabase({ kind: 'postgres', url: database }, { migrate: false });
    const slots = databaseSlotStore(db);
    const reservations = databaseReservations(db, randomUUID());
    try {
      const slot = await slots.hold('leaky', 'image', 1);
      if (slot === null) throw new Error('no slot');
      const reservation = await db.transaction((tx) => reservations.hold(tx, 'leaky', 'image', 1_000));
      reservations.held?.(reservation);
      expect(await live('running_slots')).toBe(1);
      const failures: unknown[] = [];
      await cluster.halt();
      try {
        await slots.release(slot, (e) => failures.push(e)).catch((e: unknown) => failures.push(e));
        await reservations.release(reservation, (e) => failures.push(e)).catch((e: unknown) => failures.push(e));
      } finally {
        await cluster.resume();
      }
      expect(failures).toHaveLength(2);
      // Neither renewed (the node no longer holds them) nor left: retried until the delete lands.
      await untilTrue(
        'the slot and the reservation free',
        async () => (await live('running_slots')) === 0 && (await live('storage_reservations')) === 0,
        SLOT_LEASE_MS,
      );
    } finally {
      await slots.close().catch(() => undefined);
      await reservations.close().catch(() => undefined);
      await db.close();
    }
  });

  it('a restart while generations run leaves no slot or reservation held once the work ends, within one lease', async () => {
    const c = await t.client('lost-renderer', 'enterprise');
    const request = { model: 'clipdesk/motion', prompt: 'a kite in the rain', size: '360p', duration: 2 };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await c.call('POST', '/videos/generations', request, { Prefer: 'respond-async' });
      expect(res.status).toBe(202);
      ids.push(res.body.result.id as string);
    }
    await untilTrue('generations holding slots', async () => (await live('running_slots')) > 0, 20_000);
    const failedRelease = logged.length;
    await cluster.halt();
    try {
      // A generation ended while the database was down: its release could not reach it.
      await untilTrue(
        'a release that failed while the database was down',
        () =>
          logged.slice(failedRelease).some((m) => /could not release a (concurrency slot|storage reservation)/.test(m)),
        90_000,
      );
    } finally {
      await cluster.resume();
    }
    // The work ends (each generation reaches a final state, run again where it was handed back).
    for (const id of ids)
      await until(
        `generation ${id} to end`,
        async () => {
          const res = await c.call('GET', `/generations/${id}`);
          return res.status === 200 && ['succeeded', 'failed', 'canceled'].includes(res.body.result.status as string)
            ? true
            : undefined;
        },
        150_000,
        100,
      );
    const ended = Date.now();
    // Nothing is held any more within one lease: neither renewed forever, nor left behind.
    await untilTrue(
      'every slot and reservation free',
      async () => (await live('running_slots')) === 0 && (await live('storage_reservations')) === 0,
      SLOT_LEASE_MS,
    );
    expect(Date.now() - ended).toBeLessThan(SLOT_LEASE_MS);
    expect(logged.join('\n')).not.toMatch(/its lease lapses\)/);
  }, 300_000);
});

describe.skipIf(onPostgres)('SQLite write lock held past the busy timeout', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('a request that must write answers 503 with Retry-After, and works once the lock is let go', async () => {
    const c = await t.client('busy-writer');
    expect((await c.call('GET', '/media')).status).toBe(200);
    const holder = new DatabaseSync(join(t.dataDir, 'service.db'));
    try {
      holder.exec('BEGIN IMMEDIATE');
      // Every authenticated request counts itself in the rate windows: a write, refused once the
      // service's 5 s busy timeout has passed.
      expectUnavailable(await c.call('GET', '/media'));
      holder.exec('ROLLBACK');
    } finally {
      holder.close();
    }
    expect((await c.call('GET', '/media')).status).toBe(200);
  });
});
