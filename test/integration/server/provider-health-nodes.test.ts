import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acmeMotionSettings } from '../../support/remote/acme-adapter.ts';
import { startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import type { SampleMedia } from '../../support/remote/media.ts';
import { clientFor, onPostgres, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

/**
 * A remote provider's health across two nodes on one PostgreSQL database (provider_health,
 * server/providers/remote/health.ts): a cooldown one node starts, the other's routing and
 * GET /providers respect, and failures the two see add up. PostgreSQL only: on SQLite the one node
 * keeps its providers' health in memory.
 */
const REQUEST = { model: 'clipdesk/motion', size: '360p', duration: 2, routing: 'cheapest', prompt: 'a red kite' };
const TIMINGS = { pollInitialMs: 5, pollMaxMs: 20, jitter: 0.2, stallMs: 500, requestTimeoutMs: 5_000 };

let media: SampleMedia;
let fake: AcmeFake;
let a: TestService | undefined;
let b: TestService | undefined;

beforeAll(async () => {
  media = await sampleMedia();
});
afterEach(async () => {
  await b?.service.close();
  await a?.stop();
  await fake.close();
  a = b = undefined;
});

/** Two nodes (nodes: 1 each, so the test says which one a request goes to), and a client of each. */
async function twoNodes(opts: { key?: string; timings?: Record<string, number> } = {}): Promise<TestClient[]> {
  fake = await startAcmeFake();
  fake.files.set('clip.mp4', { body: media.mp4 });
  const options = {
    ...acmeMotionSettings(opts.key ?? fake.key, fake.baseUrl),
    remoteTimings: { ...TIMINGS, ...opts.timings },
    nodes: 1 as const,
  };
  a = await startTestService(options);
  b = await startTestService({ ...options, dataDir: a.dataDir, clock: a.clock, dataFolderLock: false });
  const { key } = await a.service.createKey({ user: 'health-nodes' });
  return [clientFor(a.service.url, key), clientFor(b.service.url, key)];
}

const submits = () => fake.requests.filter((r) => r.path === '/v1/jobs' && r.method === 'POST').length;

describe.skipIf(!onPostgres)('remote provider health shared by two nodes', () => {
  it('a key refused on one node: the other skips the provider in its cooldown and lists it so, without the key', async () => {
    const [onA, onB] = await twoNodes({ key: 'wrong-key-SECRET-9999' });
    const first = await onA!.call('POST', '/videos/generations', REQUEST);
    expect([first.status, first.body.stats.providerSlug, first.body.stats.retries]).toEqual([200, 'swift', 1]);
    expect(submits()).toBe(1);

    const listed = await onB!.call('GET', '/providers/luma');
    expect(listed.body.result).toMatchObject({ status: 'unhealthy', available: false, lastError: { class: 'auth' } });
    expect(listed.body.result.cooldownUntil).toEqual(expect.any(String));
    expect(JSON.stringify(listed.body)).not.toContain('SECRET');

    const second = await onB!.call('POST', '/videos/generations', REQUEST);
    // Passed over in its cooldown: still a fallback, counted as one (docs/api.md, `stats.retries`).
    expect([second.body.stats.providerSlug, second.body.stats.retries]).toEqual(['swift', 1]);
    expect(submits()).toBe(1);
  });

  it('failures seen by two nodes add up to the cooldown', async () => {
    const [onA, onB] = await twoNodes({ timings: { failuresBeforeCooldown: 3 } });
    // A 5xx is retried once, then falls back: two failures on A, then the third on B starts the
    // cooldown (B's retry makes it four). Counted per node, neither would have reached three.
    fake.submitFailures = [500, 500, 500, 500];
    expect((await onA!.call('POST', '/videos/generations', REQUEST)).body.stats.providerSlug).toBe('swift');
    expect((await onB!.call('POST', '/videos/generations', REQUEST)).body.stats.providerSlug).toBe('swift');
    expect(submits()).toBe(4);
    const third = await onA!.call('POST', '/videos/generations', REQUEST);
    expect([third.body.stats.providerSlug, third.body.stats.retries]).toEqual(['swift', 1]);
    expect(submits()).toBe(4);
  });
});
