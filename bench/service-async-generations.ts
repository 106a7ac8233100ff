import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { GenerationAccepted } from '../shared/api/index.ts';
import { startService } from '../server/index.ts';
import type { ProviderAdapter } from '../server/providers/remote/contract.ts';
import type { RemoteProvider } from '../server/providers/types.ts';
import { percentile, reportFigure } from './support/report.ts';

/**
 * 1,000 asynchronous generations in flight on the Local engine (docs/workflows.md): each `POST
 * /videos/generations` with `Prefer: respond-async` becomes a job at a provider that never
 * finishes (an in-process adapter whose jobs stay `running`, polled on the service's real
 * schedule). Measured: `GET /generations/:id` p99 over SAMPLES requests for random ids (goal
 * ≤ 5 ms; comparator: the same request with one generation in flight) and the service's RSS growth
 * from before the first submission to after the last (goal ≤ 50 MB; comparator: that budget).
 * `BENCH_ASYNC_COUNT` lowers the count for a smoke run.
 */
const COUNT = Number(process.env['BENCH_ASYNC_COUNT'] ?? 1_000);
const SAMPLES = 2_000;
const RSS_BUDGET_MB = 50;

/** A provider that accepts every job and reports it running, forever. */
function sleepingProvider(): RemoteProvider {
  let next = 0;
  const adapter: ProviderAdapter = {
    id: 'luma',
    name: 'Sleepy',
    description: 'a benchmark provider whose jobs never finish',
    envKey: 'SLEEPY_KEY',
    defaultBaseUrl: 'https://sleepy.invalid',
    webhooks: false,
    startImage: 'none',
    testKey: () => Promise.resolve(),
    submit: () => Promise.resolve({ id: `sleep_${++next}`, state: {} }),
    poll: () => Promise.resolve({ status: 'running', progress: 0.5 }),
    cancel: () => Promise.resolve(),
  };
  return {
    kind: 'remote',
    id: 'luma',
    slug: 'sleepy',
    name: 'Sleepy',
    description: adapter.description,
    offers: [
      {
        model: 'clipdesk/motion',
        price: 0.001,
        features: ['text_to_video', 'seed'],
        sizes: ['360p'],
        path: 'sleepy/motion',
      },
    ],
    adapter,
  };
}

export default async function (): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-async-'));
  const service = await startService({
    dataDir,
    sweepIntervalMs: 0,
    providerEnv: {},
    remoteProviders: [sleepingProvider()],
    providerKeys: { luma: 'bench-not-a-real-key' },
  });
  const pool = new Pool(new URL(service.url).origin, { connections: 16 });
  try {
    const { key } = await service.createKey({ user: 'bench', tier: 'enterprise' });
    await service.setLimits('bench', {
      videos: COUNT + 1,
      rpm: 1_000_000,
      rph: 1_000_000,
      rpd: 10_000_000,
      // Each generation reserves its estimated size until it is stored.
      storageBytes: 10 ** 13,
    });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const submit = async (i: number): Promise<string> => {
      const res = await pool.request({
        path: '/v1/videos/generations',
        method: 'POST',
        headers: { ...headers, prefer: 'respond-async' },
        body: JSON.stringify({
          model: 'clipdesk/motion',
          provider: 'sleepy',
          size: '360p',
          duration: 2,
          prompt: `a paper boat, take ${i}`,
        }),
      });
      const body: unknown = await res.body.json();
      if (res.statusCode !== 202) throw new Error(`submit answered ${res.statusCode}`);
      // The spec's 202 body, read as any client reads it (docs/api.md).
      return GenerationAccepted.parse(body).result.id;
    };
    const get = async (id: string): Promise<number> => {
      const start = performance.now();
      const res = await pool.request({ path: `/v1/generations/${id}`, method: 'GET', headers });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`GET answered ${res.statusCode}`);
      return performance.now() - start;
    };
    const sample = async (ids: string[]): Promise<number> => {
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) times.push(await get(ids[Math.floor(Math.random() * ids.length)] ?? ''));
      return percentile(times, 99);
    };

    // Comparator: one generation in flight.
    const first = await submit(0);
    await sample([first]);
    const alone = await sample([first]);

    globalThis.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const ids = [first];
    for (let i = 1; i < COUNT; i += 50) {
      const batch = Array.from({ length: Math.min(50, COUNT - i) }, (_, k) => submit(i + k));
      ids.push(...(await Promise.all(batch)));
    }
    // Every job submitted at the provider and polled at least once.
    await new Promise((r) => setTimeout(r, 8_000));
    const loaded = await sample(ids);
    globalThis.gc?.();
    const growthMb = (process.memoryUsage().rss - rssBefore) / 1e6;

    reportFigure(
      `service-async-generations-get-p99-${COUNT}-in-flight`,
      loaded,
      'ms',
      loaded / alone,
      'the same GET with one generation in flight (goal ≤ 5 ms)',
    );
    reportFigure(
      `service-async-generations-rss-growth-${COUNT}-in-flight`,
      growthMb,
      'MB',
      growthMb / RSS_BUDGET_MB,
      `the ${RSS_BUDGET_MB} MB budget (goal ≤ 50 MB)`,
    );
  } finally {
    await pool.close();
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
