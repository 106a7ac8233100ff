import { rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_HEADERS } from '../../../shared/api/index.ts';
import { startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

let svc: TestService;
let origin: string;
beforeAll(async () => {
  // nodes: 1: readiness is a node's own (a load balancer probes each node), and a test breaks this node's work directory.
  svc = await startTestService({ nodes: 1 });
  origin = svc.service.url.replace(/\/v1$/, '');
});
afterAll(async () => {
  await svc.stop();
});

async function get(path: string, init: RequestInit = {}) {
  const res = await fetch(`${origin}${path}`, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('GET /healthz and GET /readyz', () => {
  it('answer without a key, outside /v1, with nothing but a status', async () => {
    const live = await get('/healthz');
    expect([live.status, JSON.parse(live.text)]).toEqual([200, { status: 'ok' }]);
    expect(live.headers.get('cache-control')).toBe('no-store');
    const ready = await get('/readyz');
    expect([ready.status, JSON.parse(ready.text)]).toEqual([200, { status: 'ready' }]);
    const head = await get('/readyz', { method: 'HEAD' });
    expect([head.status, head.text]).toEqual([200, '']);
    // They are not API endpoints: /v1/healthz is not one, and other methods are refused.
    expect((await get('/v1/healthz')).status).toBe(401);
    const post = await get('/healthz', { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('are never rate limited, nor counted against a key that happens to be sent', async () => {
    const free = await svc.client('probe-free', 'free');
    for (let i = 0; i < 25; i++) {
      const res = await get(i % 2 === 0 ? '/healthz' : '/readyz', { headers: { authorization: `Bearer ${free.key}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get(RATE_LIMIT_HEADERS.remaining)).toBeNull();
    }
    const api = await free.call('GET', '/models');
    expect(api.status).toBe(200);
    expect(Number(api.headers.get(RATE_LIMIT_HEADERS.remaining))).toBe(
      Number(api.headers.get(RATE_LIMIT_HEADERS.limit)) - 1,
    );
  });

  it('readyz: 503 with Retry-After while the storage directory cannot be written, ready again once it can', async () => {
    const tmp = join(svc.dataDir, 'tmp');
    // The work directory replaced by a file: nothing can be written inside it.
    await rm(tmp, { recursive: true, force: true });
    await writeFile(tmp, 'not a directory');
    try {
      const down = await get('/readyz');
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      expect(JSON.parse(down.text)).toEqual({ status: 'unavailable' });
      // Liveness is not readiness: the process still serves.
      expect((await get('/healthz')).status).toBe(200);
    } finally {
      await rm(tmp, { force: true });
      await mkdir(tmp);
    }
    expect((await get('/readyz')).status).toBe(200);
  });
});
