import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { healthProbes } from '../../../../server/http/health.ts';
import type { ReadinessChecks } from '../../../../server/http/health.ts';
import type { RequestContext } from '../../../../server/http/router.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** The /readyz probe behind a real HTTP server; resolves with one answer. */
async function readyz(checks: Omit<ReadinessChecks, 'storageDir' | 'logger'>, logged: string[]) {
  const storageDir = await mkdtemp(join(tmpdir(), 'clipdesk-ready-'));
  const probe = healthProbes({
    ...checks,
    storageDir,
    logger: { info: (m) => logged.push(m), warn: (m) => logged.push(m) },
    timeoutMs: 200,
  }).find((p) => p.path === '/readyz')!;
  // The probe reads nothing of the request context but the response.
  const server = createServer((req, res) => void probe.handle({ req, res } as unknown as RequestContext));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    await new Promise((r) => server.close(r));
    await rm(storageDir, { recursive: true, force: true });
  });
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text(), storageDir };
}

describe('readiness', () => {
  it('a database that cannot answer: 503, the cause logged, never in the body', async () => {
    const logged: string[] = [];
    const res = await readyz(
      {
        database: () => {
          throw new Error('connect ECONNREFUSED 10.0.0.7:5432 (db-secret-host)');
        },
        draining: () => false,
      },
      logged,
    );
    expect([res.status, res.retryAfter, res.text]).toEqual([503, '5', '{"status":"unavailable"}']);
    expect(logged).toEqual(['not ready: database check failed: connect ECONNREFUSED 10.0.0.7:5432 (db-secret-host)']);
  });

  it('a generation queue that cannot answer (PostgreSQL): 503, the cause logged', async () => {
    const logged: string[] = [];
    const res = await readyz(
      {
        database: () => undefined,
        queue: () => Promise.reject(new Error('relation "pgboss.version" does not exist')),
        draining: () => false,
      },
      logged,
    );
    expect([res.status, res.text]).toEqual([503, '{"status":"unavailable"}']);
    expect(logged).toEqual(['not ready: generation queue check failed: relation "pgboss.version" does not exist']);
  });

  it('a database that hangs counts as down after the timeout', async () => {
    const logged: string[] = [];
    const res = await readyz({ database: () => new Promise(() => undefined), draining: () => false }, logged);
    expect(res.status).toBe(503);
    expect(logged[0]).toMatch(/^not ready: /);
  });

  it('draining (a shutdown has begun): 503 before anything is checked', async () => {
    let queried = false;
    const res = await readyz({ database: () => void (queried = true), draining: () => true }, []);
    expect(res.status).toBe(503);
    expect(queried).toBe(false);
  });

  it('ready: the probe file it writes is gone again', async () => {
    const res = await readyz({ database: () => undefined, draining: () => false }, []);
    expect([res.status, res.text]).toEqual([200, '{"status":"ready"}']);
    expect(await readdir(res.storageDir)).toEqual([]);
  });
});
