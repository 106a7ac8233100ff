import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool } from 'undici';
import { startService } from '../server/index.ts';
import { startFakeProcess } from './support/provider-fake.ts';
import { reportFigure } from './support/report.ts';

/**
 * 100 provider jobs in flight (docs/providers.md): the service holds 100 video generations on a remote
 * provider whose jobs keep running (fal's contract fake, scenario `slow`, in a process of its own so
 * its work is not counted), polling each on the service's real schedule (5 s growing ×1.5 to 30 s,
 * with jitter). Measured over the first WINDOW_MS after all are submitted (the busiest minute: the
 * polls are closest together then): the service process's CPU as a share of
 * one core (goal ≤ 2 %) and its event-loop delay p99 (goal ≤ 10 ms). The comparator is the same
 * process idle for the same window (no job in flight), measured first.
 */
const JOBS = 100;
const WINDOW_MS = 60_000;
const LOOP_WINDOW_MS = 10_000;
const LOOP_RESOLUTION_MS = 10;

export default async function (): Promise<void> {
  const fake = await startFakeProcess();
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-inflight-'));
  const service = await startService({
    dataDir,
    sweepIntervalMs: 0,
    providerKeys: { fal: fake.key },
    providerBaseUrls: { fal: fake.baseUrl },
  });
  const pool = new Pool(new URL(service.url).origin, { connections: JOBS + 4 });
  try {
    const { key } = await service.createKey({ user: 'bench', tier: 'enterprise' });
    await service.setLimits('bench', { videos: JOBS, rpm: 10_000, rph: 100_000, rpd: 1_000_000 });

    const idle = await measure(WINDOW_MS / 6);

    // 100 generations, held open (synchronous mode), each becoming one provider job.
    const requests: Array<Promise<unknown>> = [];
    for (let i = 0; i < JOBS; i++) {
      requests.push(
        pool
          .request({
            path: '/v1/videos/generations',
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'kling/v2.1',
              prompt: `a paper boat, take ${i}`,
              provider: 'fal',
              duration: 5,
            }),
          })
          .then((r) => r.body.dump())
          .catch(() => undefined),
      );
    }
    await fake.waitForSubmissions(JOBS);
    const busy = await measure(WINDOW_MS);
    reportFigure(
      'provider-jobs-in-flight-cpu',
      busy.cpuPercent,
      '% of one core',
      busy.cpuPercent / Math.max(idle.cpuPercent, 0.01),
      `the same process idle (${idle.cpuPercent.toFixed(2)} %), goal ≤ 2 %`,
    );
    reportFigure(
      'provider-jobs-in-flight-loop-p99',
      busy.loopP99Ms,
      'ms',
      busy.loopP99Ms / idle.loopP99Ms,
      `event-loop delay p99 idle (${idle.loopP99Ms.toFixed(2)} ms), goal ≤ 10 ms`,
    );
    await service.close();
    await Promise.all(requests);
  } finally {
    await pool.close().catch(() => undefined);
    await service.close();
    fake.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The process's CPU over `ms` as a share of one core, with nothing of ours running beside it; then,
 * over a window of its own (the monitor's timer costs CPU too), the event loop's delay p99: how late
 * a timer fires. The histogram records the time between its timer's runs, so the timer's own
 * period is taken off.
 */
async function measure(ms: number): Promise<{ cpuPercent: number; loopP99Ms: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  await new Promise((r) => setTimeout(r, LOOP_WINDOW_MS));
  loop.disable();
  return {
    cpuPercent: ((used.user + used.system) / 1000 / wall) * 100,
    loopP99Ms: Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
  };
}
