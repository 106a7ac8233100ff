// 1,000 `GET /media` pages through the client against raw `undici.request` on the same engine.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startService } from '../server/index.ts';
import { createApiClient } from '../electron/core/api/index.ts';

const PAGES = 1_000;

export default async function (): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-list-'));
  const service = await startService({ dataDir, sweepIntervalMs: 0 });
  try {
    // One user each, so neither run eats the other's rate window.
    const a = await service.createKey({ user: 'bench-client', tier: 'enterprise' });
    const b = await service.createKey({ user: 'bench-raw', tier: 'enterprise' });
    const api = createApiClient({ baseUrl: service.url, getKey: () => a.key });
    const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
    const rawOnce = async (page: number): Promise<void> => {
      const res = await request(`${service.url}/media?limit=25&page=${page}`, {
        dispatcher: agent,
        headers: { authorization: `Bearer ${b.key}`, accept: 'application/json' },
      });
      JSON.parse(await res.body.text());
    };
    await api.listMedia({ page: 0 });
    await rawOnce(0);
    let t = performance.now();
    for (let i = 1; i < PAGES; i++) await rawOnce(i % 50);
    const rawMs = performance.now() - t;
    t = performance.now();
    for (let i = 1; i < PAGES; i++) await api.listMedia({ limit: 25, page: i % 50 });
    const clientMs = performance.now() - t;
    const clientRate = (PAGES / clientMs) * 1000;
    const rawRate = (PAGES / rawMs) * 1000;
    console.log(
      `bench client-media-list: ${clientRate.toFixed(0)} pages/s (ratio ${(clientRate / rawRate).toFixed(2)} vs undici.request)`,
    );
    await api.dispose();
    await agent.close();
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
