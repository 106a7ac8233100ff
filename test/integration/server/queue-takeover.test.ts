import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SqlDatabase } from '../../../server/storage/sql/types.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import type { ServedProcess } from '../../support/service-process.ts';
import { clientFor, onPostgres, openTestDatabase, processEnv } from './helpers.ts';
import type { TestClient } from './helpers.ts';
import { until } from '../../support/until.ts';

/**
 * The generation queue across nodes (docs/service.md): two `clipdesk-service serve` processes on one
 * PostgreSQL database and one bucket. A node killed with SIGKILL mid-generation loses it to the
 * other once its lease (here 10 s, pg-boss's least) lapses; the client polling the surviving node
 * sees it succeed, charged once. A node that was only paused past its lease does not charge a
 * second time when it wakes; a DELETE on one node stops the render on the other; a node stopped
 * with SIGTERM hands its generations back at once.
 *
 * Only on the PostgreSQL pass: on SQLite (one node, the embedded engine) there is no queue, and a
 * generation runs in the process that accepted it (async-restart.test.ts covers its resume).
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
const LEASE_SECONDS = 10;

/** Killed once it is generating; small, so that the takeover's render is quick on a busy machine. */
const VIDEO = { model: 'clipdesk/motion', prompt: 'a lighthouse in a gale', size: '360p', duration: 3 };

async function cli(args: string[], dataDir: string): Promise<string> {
  const env = await processEnv(dataDir);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args, '--data', dataDir], { cwd: ROOT, env });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', fail);
    child.on('close', () => done(stdout));
  });
}

async function node(dataDir: string): Promise<ServedProcess> {
  const env = { ...process.env };
  delete env['CLIPDESK_TEST_CRASH_AT'];
  return serveProcess(dataDir, {
    args: ['--lease-timeout', String(LEASE_SECONDS), '--shutdown-grace', '0'],
    env: await processEnv(dataDir, env),
  });
}

/** Nodes are processes here, slower to answer than in-process services. */
const untilNodes = <T>(what: string, look: () => Promise<T | undefined>) => until(what, look, 90_000, 50);

describe.skipIf(!onPostgres)('generations through the queue, across two nodes', () => {
  let dir: string;
  let db: SqlDatabase;
  let key: string;
  let nodes: ServedProcess[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-queue-'));
    key = (await cli(['keys', 'create', '--user', 'quinn', '--tier', 'pro'], dir)).trim();
    nodes = [await node(dir), await node(dir)];
    db = await openTestDatabase(dir);
  });

  afterEach(async () => {
    for (const n of nodes) {
      n.child.kill('SIGCONT');
      n.child.kill('SIGKILL');
      await exited(n.child);
    }
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  const on = (n: ServedProcess): TestClient => clientFor(n.url, key);

  /** The node whose queue attempt holds the generation now (its pid is in the lease owner). */
  async function owner(id: string, not?: ServedProcess): Promise<ServedProcess> {
    return untilNodes(`a node to hold ${id}`, async () => {
      const row = await db.get<{ lease_owner: string | null }>('SELECT lease_owner FROM generations WHERE id = ?', id);
      const pid = row?.lease_owner ? Number(/:(\d+)$/.exec(row.lease_owner)?.[1]) : undefined;
      return nodes.find((n) => n.child.pid === pid && n !== not);
    });
  }

  async function status(client: TestClient, id: string): Promise<string> {
    return (await client.call('GET', `/generations/${id}`)).body.result.status as string;
  }

  async function start(client: TestClient, body: object = VIDEO): Promise<string> {
    const accepted = await client.call('POST', '/videos/generations', body, { prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    return accepted.body.result.id as string;
  }

  /** A synchronous request's generation (by its Idempotency-Key, or the account's only one) is rendering: its id. */
  async function renderStarted(idempotencyKey?: string): Promise<string> {
    return untilNodes('the render to start', async () => {
      const row = await db.get<{ id: string; status: string }>(
        idempotencyKey !== undefined
          ? 'SELECT id, status FROM generations WHERE idempotency_key = ?'
          : 'SELECT id, status FROM generations WHERE user_id = ?',
        idempotencyKey ?? 'quinn',
      );
      return row?.status === 'generating' ? row.id : undefined;
    });
  }

  /** Items stored and money charged for the account, asked of `client`'s node. */
  async function charged(client: TestClient): Promise<{ items: number; cost: number; running: number }> {
    const list = await client.call('GET', '/media?user=me&limit=100');
    const usage = await client.call('GET', '/usage');
    return {
      items: list.body.result.total as number,
      cost: usage.body.result.usage.cost.total as number,
      running: usage.body.result.usage.running.video as number,
    };
  }

  it('kill -9 of the node running a generation mid-render: the other takes it over after the lease and it succeeds, charged once', async () => {
    const id = await start(on(nodes[0]!));
    const running = await owner(id);
    const other = nodes.find((n) => n !== running)!;
    await untilNodes('the render to start', async () =>
      (await status(on(other), id)) === 'generating' ? true : undefined,
    );
    const killedAt = Date.now();
    running.child.kill('SIGKILL');
    await exited(running.child);

    // The surviving node holds it once the dead one's heartbeat has lapsed, not before.
    await owner(id, running);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual((LEASE_SECONDS - 2) * 1000);
    const done = await untilNodes('the generation to end', async () => {
      const s = await status(on(other), id);
      return s === 'succeeded' || s === 'failed' ? s : undefined;
    });
    expect(done).toBe('succeeded');
    const record = (await on(other).call('GET', `/generations/${id}`)).body.result;
    expect(record.data).toHaveLength(1);
    const now = await charged(on(other));
    expect(now.items).toBe(1);
    expect(now.cost).toBeCloseTo(record.price as number, 6);
  }, 180_000);

  it('a node paused past its lease does not charge a second time when it wakes', async () => {
    const id = await start(on(nodes[0]!));
    const slow = await owner(id);
    const other = nodes.find((n) => n !== slow)!;
    await untilNodes('the render to start', async () =>
      (await status(on(other), id)) === 'generating' ? true : undefined,
    );
    slow.child.kill('SIGSTOP');
    await owner(id, slow);
    await untilNodes('the takeover to finish', async () =>
      (await status(on(other), id)) === 'succeeded' ? true : undefined,
    );
    slow.child.kill('SIGCONT');
    // Woken, the slow node finds the row another's (its watch, or its commit) and stores nothing.
    await untilNodes('the slow node to let go', async () =>
      (await charged(on(slow))).running === 0 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 2_000));
    const record = (await on(slow).call('GET', `/generations/${id}`)).body.result;
    expect(record.status).toBe('succeeded');
    const now = await charged(on(slow));
    expect(now.items).toBe(1);
    expect(now.cost).toBeCloseTo(record.price as number, 6);
  }, 180_000);

  it('DELETE on one node stops the render on the node running it; nothing is charged', async () => {
    // 8 s of 1080p: tens of seconds of rendering here, unless it is stopped.
    const id = await start(on(nodes[0]!), { ...VIDEO, size: '1080p', duration: 8 });
    const running = await owner(id);
    const other = nodes.find((n) => n !== running)!;
    await untilNodes('the render to start', async () =>
      (await status(on(other), id)) === 'generating' ? true : undefined,
    );
    const canceled = await on(other).call('DELETE', `/generations/${id}`);
    expect(canceled.body.result.status).toBe('canceled');
    const stoppedAt = Date.now();
    // The running node notices within its watch interval (1 s) and releases its concurrency slot.
    await until(
      'the render to stop',
      async () => ((await charged(on(running))).running === 0 ? true : undefined),
      10_000,
      50,
    );
    expect(Date.now() - stoppedAt).toBeLessThan(8_000);
    expect(await charged(on(running))).toMatchObject({ items: 0, cost: 0 });
    expect(await status(on(running), id)).toBe('canceled');
  }, 180_000);

  it('SIGTERM hands the generation back: the other node takes it at once, not after the lease', async () => {
    const id = await start(on(nodes[0]!));
    const leaving = await owner(id);
    const staying = nodes.find((n) => n !== leaving)!;
    await untilNodes('the render to start', async () =>
      (await status(on(staying), id)) === 'generating' ? true : undefined,
    );
    const stoppedAt = Date.now();
    leaving.child.kill('SIGTERM');
    await owner(id, leaving);
    expect(Date.now() - stoppedAt).toBeLessThan((LEASE_SECONDS - 2) * 1000);
    expect(await exited(leaving.child)).toBe(null);
    expect(leaving.child.exitCode).toBe(0);
    await untilNodes('the generation to succeed', async () =>
      (await status(on(staying), id)) === 'succeeded' ? true : undefined,
    );
    const now = await charged(on(staying));
    expect(now.items).toBe(1);
  }, 180_000);

  it('a synchronous request whose node is killed, retried on the other node with its Idempotency-Key, gets one result charged once', async () => {
    const [first, second] = nodes as [ServedProcess, ServedProcess];
    const lost = on(first)
      .call('POST', '/videos/generations', VIDEO, { 'idempotency-key': 'sync-across-nodes' })
      .then(
        (r) => r.status,
        () => 'no answer',
      );
    await renderStarted('sync-across-nodes');
    first.child.kill('SIGKILL');
    expect(await lost).toBe('no answer');

    const retry = await on(second).call('POST', '/videos/generations', VIDEO, {
      'idempotency-key': 'sync-across-nodes',
    });
    expect(retry.status).toBe(200);
    const ids = (retry.body.data as Array<{ id: string }>).map((i) => i.id);
    expect(ids).toHaveLength(1);
    const again = await on(second).call('POST', '/videos/generations', VIDEO, {
      'idempotency-key': 'sync-across-nodes',
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((again.body.data as Array<{ id: string }>).map((i) => i.id)).toEqual(ids);
    const now = await charged(on(second));
    expect(now.items).toBe(1);
    expect(now.cost).toBeCloseTo(retry.body.price as number, 6);
    // One generation (a row and a queue job) answered both: the retry followed it, it did not run anew.
    const rows = await db.all<{ status: string; result: string }>(
      'SELECT status, result FROM generations WHERE user_id = ?',
      'quinn',
    );
    expect(rows.map((r) => r.status)).toEqual(['succeeded']);
    expect((JSON.parse(rows[0]!.result) as { data: Array<{ id: string }> }).data.map((i) => i.id)).toEqual(ids);
  }, 180_000);

  it('a synchronous request whose node stops answers 503 with Retry-After; the generation goes on and its Idempotency-Key gets it on the other node, charged once', async () => {
    const [leaving, staying] = nodes as [ServedProcess, ServedProcess];
    const first = on(leaving).call('POST', '/videos/generations', VIDEO, { 'idempotency-key': 'sync-sigterm' });
    await renderStarted('sync-sigterm');
    leaving.child.kill('SIGTERM');
    const answered = await first;
    expect(answered.status).toBe(503);
    expect(answered.headers.get('retry-after')).toBe('1');
    expect(answered.body.message).toMatch(/Idempotency-Key/);
    const retry = await on(staying).call('POST', '/videos/generations', VIDEO, { 'idempotency-key': 'sync-sigterm' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const now = await charged(on(staying));
    expect(now.items).toBe(1);
    expect(now.cost).toBeCloseTo(retry.body.price as number, 6);
  }, 180_000);

  it('a synchronous request whose client hangs up cancels its generation on whichever node runs it: nothing stored or charged', async () => {
    const aborter = new AbortController();
    const pending = fetch(`${nodes[0]!.url}/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...VIDEO, size: '1080p', duration: 8 }),
      signal: aborter.signal,
    }).catch((e: unknown) => e);
    const id = await renderStarted();
    aborter.abort();
    await pending;
    await untilNodes('the generation to end canceled', async () =>
      (await status(on(nodes[1]!), id)) === 'canceled' ? true : undefined,
    );
    for (const n of nodes)
      await untilNodes('the render to stop', async () => ((await charged(on(n))).running === 0 ? true : undefined));
    expect(await charged(on(nodes[1]!))).toMatchObject({ items: 0, cost: 0 });
  }, 180_000);

  it('a synchronous request on a node paused past a retry answered by the other node: it answers that result when it wakes, charged once', async () => {
    const [slow, quick] = nodes as [ServedProcess, ServedProcess];
    const first = on(slow).call('POST', '/videos/generations', VIDEO, { 'idempotency-key': 'sync-slow-node' });
    // Rendering, past its transactions (a node paused inside one would hold its locks).
    await renderStarted('sync-slow-node');
    slow.child.kill('SIGSTOP');
    const retry = await on(quick).call('POST', '/videos/generations', VIDEO, { 'idempotency-key': 'sync-slow-node' });
    expect(retry.status).toBe(200);
    slow.child.kill('SIGCONT');
    // Both requests followed the one generation (a row and a queue job, sync-generation.ts): the
    // first answers its result when it wakes, not a result of its own.
    const late = await first;
    expect(late.status).toBe(200);
    expect((late.body.data as Array<{ id: string }>).map((i) => i.id)).toEqual(
      (retry.body.data as Array<{ id: string }>).map((i) => i.id),
    );
    const now = await charged(on(quick));
    expect(now.items).toBe(1);
    expect(now.cost).toBeCloseTo(retry.body.price as number, 6);
  }, 180_000);
});
