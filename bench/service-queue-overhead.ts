import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { GenerationAccepted } from '../shared/api/index.ts';
import { startService } from '../server/index.ts';
import type { RunningService } from '../server/index.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { reportFigure } from './support/report.ts';

/**
 * Generation overhead through the work queue (docs/benchmarks.md, goal ≤ 1.05× the one-node path). Two nodes
 * (two services in this process) on one private PostgreSQL database (test/support/postgres.ts).
 * Through the queue, asynchronously: `POST /videos/generations` with `Prefer: respond-async` and a
 * `webhook_url` on node A, which stores the row and queues its job; whichever node's worker
 * fetches it claims the row, plans, renders, commits, and the service POSTs the final record to
 * the webhook receiver (a loopback server here): the time is from the POST to the delivery's
 * arrival. Through the queue, synchronously: the same request without the preference on node A,
 * which queues it the same way and answers once the row has ended (sync-generation.ts). Comparator,
 * in the same run: the one-node path, the same request synchronously on a one-node service on
 * SQLite and disk (it runs in the process that accepted it: no row, no queue, no webhook, no
 * database server). The paths alternate, one generation at a time, so machine noise falls on
 * all; the figure is the median wall time of each, and the ratio to the one-node path. The same
 * for a small image (a render of tens of milliseconds, where the queue's fixed cost shows most),
 * for information.
 *
 * Why the webhook and not a poll loop for the goal: a client polling `GET /generations/:id` every
 * POLL_MS sends about a hundred authenticated requests during a one-second render, and on this
 * two-core machine their CPU slows the render itself (measured: most of what looked like the
 * queue's overhead). That is the poll loop's cost, which the client chooses, not the queue's; it
 * is still reported (`-polled`, for information).
 * 25 rounds: at 15 the medians moved ±5 % from run to run on this machine, as much as the goal's
 * margin. `BENCH_QUEUE_ROUNDS` lowers the rounds for a smoke run.
 */
const ROUNDS = Number(process.env['BENCH_QUEUE_ROUNDS'] ?? 25);
const POLL_MS = 10;

const VIDEO = { model: 'clipdesk/motion', size: '360p', duration: 2 };
const IMAGE = { model: 'clipdesk/still', size: '256x256' };

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export default async function (): Promise<void> {
  const cluster = await startPostgres();
  const dirs = [
    await mkdtemp(join(tmpdir(), 'clipdesk-bench-queue-a-')),
    await mkdtemp(join(tmpdir(), 'clipdesk-bench-queue-b-')),
  ];
  const sqliteDir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-queue-sqlite-'));
  const services: RunningService[] = [];
  let pool: Pool | undefined;
  let sqlitePool: Pool | undefined;
  const hooks = webhookReceiver();
  try {
    const target = await hooks.listen();
    const database = await cluster.createDatabase('clipdesk_bench_queue');
    for (const dataDir of dirs)
      services.push(
        // The receiver is on loopback: the operator's flag allows it.
        await startService({ dataDir, sweepIntervalMs: 0, providerEnv: {}, database, allowPrivateWebhooks: true }),
      );
    const a = services[0]!;
    const oneNodeService = await startService({ dataDir: sqliteDir, sweepIntervalMs: 0, providerEnv: {} });
    services.push(oneNodeService);
    const limits = { rpm: 1_000_000, rph: 1_000_000, rpd: 10_000_000, storageBytes: 10 ** 13 };
    const { key } = await a.createKey({ user: 'bench', tier: 'enterprise' });
    await a.setLimits('bench', limits);
    const sqliteKey = (await oneNodeService.createKey({ user: 'bench', tier: 'enterprise' })).key;
    await oneNodeService.setLimits('bench', limits);
    pool = new Pool(new URL(a.url).origin, { connections: 4 });
    sqlitePool = new Pool(new URL(oneNodeService.url).origin, { connections: 4 });
    const client = pool;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    let take = 0;
    const body = (shape: object, endpoint: string) =>
      JSON.stringify({ ...shape, prompt: `a paper boat, ${endpoint} take ${++take}` });

    /** A synchronous request: on the one-node service (SQLite), or through the queue (node A). */
    const synchronous = (on: Pool, key: string) => async (endpoint: string, shape: object) => {
      const start = performance.now();
      const res = await on.request({
        path: `/v1/${endpoint}`,
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${key}` },
        body: body(shape, endpoint),
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`the synchronous generation answered ${res.statusCode}`);
      return performance.now() - start;
    };
    const oneNode = synchronous(sqlitePool, sqliteKey);
    const queuedSync = synchronous(client, key);
    /** Accepted asynchronously; resolves with the generation's id and when the POST began. */
    const accept = async (endpoint: string, shape: object, extra: object = {}) => {
      const start = performance.now();
      const res = await client.request({
        path: `/v1/${endpoint}`,
        method: 'POST',
        headers: { ...headers, prefer: 'respond-async' },
        body: JSON.stringify({ ...JSON.parse(body(shape, endpoint)), ...extra }),
      });
      const answer: unknown = await res.body.json();
      if (res.statusCode !== 202) throw new Error(`the asynchronous generation answered ${res.statusCode}`);
      // The spec's 202 body, read as any client reads it (docs/api.md).
      return { id: GenerationAccepted.parse(answer).result.id, start };
    };
    const queued = async (endpoint: string, shape: object): Promise<number> => {
      const { id, start } = await accept(endpoint, shape, { webhook_url: target });
      const event = await hooks.delivery(id);
      if (event.type !== 'generation.succeeded') throw new Error(`the queued generation ended ${event.type}`);
      return event.at - start;
    };
    const polled = async (endpoint: string, shape: object): Promise<number> => {
      const { id, start } = await accept(endpoint, shape);
      for (;;) {
        const res = await client.request({ path: `/v1/generations/${id}`, method: 'GET', headers });
        const record = (await res.body.json()) as { result?: { status: string } };
        const status = record.result?.status;
        if (status === 'succeeded') return performance.now() - start;
        if (status === 'failed' || status === 'canceled') throw new Error(`the queued generation ended ${status}`);
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };

    for (const [name, endpoint, shape] of [
      ['video', 'videos/generations', VIDEO],
      ['image', 'images/generations', IMAGE],
    ] as const) {
      // Warm every path (ffmpeg's first start, statement caches, the queue's workers, the receiver).
      await oneNode(endpoint, shape);
      await queued(endpoint, shape);
      await queuedSync(endpoint, shape);
      await polled(endpoint, shape);
      const direct: number[] = [];
      const through: number[] = [];
      const throughSync: number[] = [];
      const throughPolled: number[] = [];
      const paths: Array<[number[], (e: string, s: object) => Promise<number>]> = [
        [direct, oneNode],
        [through, queued],
        [throughSync, queuedSync],
        [throughPolled, polled],
      ];
      for (let round = 0; round < ROUNDS; round++) {
        // A different path goes first each round, so a slow spell does not always land on the same one.
        for (let i = 0; i < paths.length; i++) {
          const [samples, run] = paths[(round + i) % paths.length]!;
          samples.push(await run(endpoint, shape));
        }
      }
      const d = median(direct);
      const comparator = `the one-node path (the same request synchronously on one node on SQLite, median ${d.toFixed(0)} ms)`;
      const goal = name === 'video' ? ' (goal ≤ 1.05)' : ', for information';
      const q = median(through);
      reportFigure(`service-queue-overhead-${name}`, q, 'ms', q / d, `${comparator}${goal}`);
      const qs = median(throughSync);
      reportFigure(
        `service-queue-overhead-${name}-sync`,
        qs,
        'ms',
        qs / d,
        `${comparator}, a synchronous request through the queue${goal}`,
      );
      const p = median(throughPolled);
      reportFigure(
        `service-queue-overhead-${name}-polled`,
        p,
        'ms',
        p / d,
        `${comparator}, the client polling every ${POLL_MS} ms, for information`,
      );
    }
  } finally {
    await pool?.close();
    await sqlitePool?.close();
    await hooks.close();
    for (const s of services.reverse()) await s.close().catch(() => undefined);
    for (const dir of [...dirs, sqliteDir]) await rm(dir, { recursive: true, force: true });
    await cluster.stop();
  }
}

/**
 * A loopback webhook receiver: the time each generation's delivery arrived, by generation id (a
 * delivery may come before its POST's answer has been read).
 */
function webhookReceiver() {
  const arrived = new Map<string, { type: string; at: number }>();
  const waiting = new Map<string, (event: { type: string; at: number }) => void>();
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      res.writeHead(204).end();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { id: string } };
      const found = { type: event.type, at };
      const wake = waiting.get(event.data.id);
      if (wake) wake(found);
      else arrived.set(event.data.id, found);
    });
  });
  return {
    async listen(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    },
    delivery(id: string): Promise<{ type: string; at: number }> {
      const early = arrived.get(id);
      if (early) return Promise.resolve(early);
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
