import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startService } from '../server/index.ts';
import type { RunningService } from '../server/index.ts';
import { startPostgres } from '../test/support/postgres.ts';
import { reportFigure } from './support/report.ts';

/**
 * Generation overhead through the work queue (issue 15, goal ≤ 1.05× the one-node path). Two nodes
 * (two services in this process) on one private PostgreSQL database (test/support/postgres.ts).
 * Through the queue: `POST /videos/generations` with `Prefer: respond-async` on node A, which
 * stores the row and queues its job; whichever node's worker fetches it claims the row, plans,
 * renders, commits, and the client polls `GET /generations/:id` every POLL_MS until `succeeded`.
 * Comparator, in the same run on the same database: the one-node path, the same request
 * synchronously on node A (it runs in the process that accepted it, no row, no queue). The two
 * alternate, one generation at a time, so machine noise falls on both; the figure is the median
 * wall time of each, and the ratio queue/one-node. The same for a small image (a render of tens
 * of milliseconds, where the queue's fixed cost shows most), for information.
 * `BENCH_QUEUE_ROUNDS` lowers the rounds for a smoke run.
 */
const ROUNDS = Number(process.env['BENCH_QUEUE_ROUNDS'] ?? 15);
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
  const services: RunningService[] = [];
  let pool: Pool | undefined;
  try {
    const database = await cluster.createDatabase('clipdesk_bench_queue');
    for (const dataDir of dirs)
      services.push(await startService({ dataDir, sweepIntervalMs: 0, providerEnv: {}, database }));
    const a = services[0]!;
    const { key } = await a.createKey({ user: 'bench', tier: 'enterprise' });
    await a.setLimits('bench', { rpm: 1_000_000, rph: 1_000_000, rpd: 10_000_000, storageBytes: 10 ** 13 });
    pool = new Pool(new URL(a.url).origin, { connections: 4 });
    const client = pool;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    let take = 0;
    const body = (shape: object, endpoint: string) =>
      JSON.stringify({ ...shape, prompt: `a paper boat, ${endpoint} take ${++take}` });

    const oneNode = async (endpoint: string, shape: object): Promise<number> => {
      const start = performance.now();
      const res = await client.request({
        path: `/v1/${endpoint}`,
        method: 'POST',
        headers,
        body: body(shape, endpoint),
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`the synchronous generation answered ${res.statusCode}`);
      return performance.now() - start;
    };
    const queued = async (endpoint: string, shape: object): Promise<number> => {
      const start = performance.now();
      const res = await client.request({
        path: `/v1/${endpoint}`,
        method: 'POST',
        headers: { ...headers, prefer: 'respond-async' },
        body: body(shape, endpoint),
      });
      const accepted = (await res.body.json()) as { data?: { id: string } };
      if (res.statusCode !== 202 || !accepted.data)
        throw new Error(`the asynchronous generation answered ${res.statusCode}`);
      for (;;) {
        const polled = await client.request({ path: `/v1/generations/${accepted.data.id}`, method: 'GET', headers });
        const record = (await polled.body.json()) as { result?: { status: string } };
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
      // Warm both paths (ffmpeg's first start, statement caches, the queue's workers).
      await oneNode(endpoint, shape);
      await queued(endpoint, shape);
      const direct: number[] = [];
      const through: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating which goes first, so a slow spell does not always land on the same path.
        if (round % 2 === 0) {
          direct.push(await oneNode(endpoint, shape));
          through.push(await queued(endpoint, shape));
        } else {
          through.push(await queued(endpoint, shape));
          direct.push(await oneNode(endpoint, shape));
        }
      }
      const q = median(through);
      const d = median(direct);
      reportFigure(
        `service-queue-overhead-${name}`,
        q,
        'ms',
        q / d,
        `the one-node path (the same request synchronously on the accepting node, median ${d.toFixed(0)} ms)${name === 'video' ? ' (goal ≤ 1.05)' : ', for information'}`,
      );
    }
  } finally {
    await pool?.close();
    for (const s of services.reverse()) await s.close().catch(() => undefined);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    await cluster.stop();
  }
}
