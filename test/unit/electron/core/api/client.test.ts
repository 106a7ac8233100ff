import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../../shared/clock.ts';
import { ServiceError, createApiClient, errorCodeFor } from '../../../../../electron/core/api/index.ts';
import { DEFAULT_RETRY_POLICY, RetryBudget } from '../../../../../electron/core/api/retry.ts';
import type { ApiClient, Sleep, WaitNotice } from '../../../../../electron/core/api/index.ts';
import { emptyPage, generation, hang, json, reset, startLoopbackServer } from './loopback-server.ts';
import type { LoopbackServer } from './loopback-server.ts';

let server: LoopbackServer;
let foreign: LoopbackServer;
let client: ApiClient;
let clock: ManualClock;
let sleeps: number[];

/** Sleeping moves the manual clock: no test waits for real time. */
const fakeSleep: Sleep = (ms, signal) => {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  sleeps.push(ms);
  clock.advance(ms);
  return Promise.resolve();
};

beforeEach(async () => {
  server = await startLoopbackServer();
  foreign = await startLoopbackServer();
  clock = new ManualClock(Date.UTC(2026, 0, 1));
  sleeps = [];
  client = createApiClient({
    baseUrl: `${server.origin}/v1`,
    getKey: () => 'sk-secret-key',
    clock,
    sleep: fakeSleep,
    random: () => 0,
  });
});

afterEach(async () => {
  await client.dispose();
  await server.close();
  await foreign.close();
});

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('typed errors', () => {
  it('keeps every service code and the message', async () => {
    const cases: Array<[number, string]> = [
      [401, 'authentication_error'],
      [403, 'permission_error'],
      [400, 'invalid_request_error'],
      [404, 'not_found_error'],
      [422, 'unsupported_parameter'],
      [503, 'provider_unavailable'],
    ];
    for (const [status, code] of cases) {
      server.script(json(status, { success: false, message: `msg for ${code}`, code }));
      const err = await failure(client.generateVideo({ model: 'a/b', prompt: 'x' }, { idempotencyKey: 'k' }));
      expect(err).toMatchObject({ status, code, message: `msg for ${code}` });
    }
  });

  it('falls back on the status for codes it does not know', () => {
    expect(errorCodeFor(401, 'weird')).toBe('authentication_error');
    expect(errorCodeFor(429, undefined)).toBe('rate_limit_exceeded');
    expect(errorCodeFor(502, undefined)).toBe('internal_error');
  });

  it('reports a response that is not JSON or not the interface as invalid_response', async () => {
    server.script((_req, res) => res.end('<html>'));
    expect((await failure(client.listMedia())).code).toBe('invalid_response');
    server.script(json(200, { success: true, result: { medias: 'nope' } }));
    expect((await failure(client.listMedia())).code).toBe('invalid_response');
  });

  it('keeps fields it does not know (lenient parsing)', async () => {
    server.script(json(200, { ...generation, extra: 1, data: [{ ...generation.data[0], novel: 'kept' }] }));
    const res = await client.generateVideo({ model: 'a/b', prompt: 'x' }, { idempotencyKey: 'k' });
    expect((res.data[0] as Record<string, unknown>)['novel']).toBe('kept');
  });
});

describe('single records', () => {
  const model = {
    id: 'a/b',
    base: 'a',
    slug: 'b',
    name: 'B',
    version: '1',
    versions: ['1'],
    media: 'video',
    description: '',
    parameters: {},
    providers: [],
  };
  const provider = { id: 'p', slug: 'p', name: 'P', status: 'available', models: ['a/b'], features: [] };
  const ticket = {
    id: 'upl_1',
    uploadUrl: 'http://h/u',
    method: 'PUT',
    headers: {},
    expiresAt: '2026-01-01T00:00:00Z',
  };
  const item = { ...generation.data[0], modelSlug: 'local/m:1', providerName: 'P' };

  it('reads them under result (docs/api.md) and under data from older servers', async () => {
    const calls: Array<[unknown, () => Promise<unknown>]> = [
      [model, () => client.getModel('a/b')],
      [provider, () => client.getProvider('p')],
      [ticket, () => client.requestUpload({ filename: 'a.png', mime: 'image/png', size: 1 })],
      [item, () => client.completeUpload('upl_1')],
      [item, () => client.getMedia('med_1')],
    ];
    for (const [record, call] of calls) {
      server.script(json(200, { success: true, result: record }));
      expect(await call()).toEqual(record);
      server.script(json(200, { success: true, data: record }));
      expect(await call()).toEqual(record);
      server.script(json(200, { success: true, data: [record] }));
      expect(await call()).toEqual(record);
    }
  });

  it('refuses an envelope with neither, or an empty data array', async () => {
    server.script(json(200, { success: true }));
    expect((await failure(client.getModel('a/b'))).code).toBe('invalid_response');
    server.script(json(200, { success: true, data: [] }));
    expect((await failure(client.getMedia('med_1'))).code).toBe('invalid_response');
  });
});

describe('any v1 service (docs/api.md "Extensions")', () => {
  it('names the failing field of a single record, under result or the legacy data', async () => {
    server.script(json(200, { success: true, result: { name: 'no id' } }));
    expect((await failure(client.getModel('a/b'))).message).toMatch(/GET \/models\/a%2Fb .*\(result\.id: /);
    server.script(json(200, { success: true, data: [{ name: 'no id' }] }));
    expect((await failure(client.getProvider('p'))).message).toMatch(/\(result\.id: /);
  });

  it('keeps a record without extensions, drops a malformed one with one notice per field', async () => {
    const notices: string[] = [];
    const tolerant = createApiClient({
      baseUrl: `${server.origin}/v1`,
      getKey: () => 'k',
      onNotice: (l) => notices.push(l),
    });
    try {
      const models = [
        { id: 'acme/motion:2', extra: { any: 1 } },
        { id: 'acme/still', media: 'image', parameters: 'see docs', version: '3' },
        { id: 'acme/other', parameters: [] },
      ];
      server.script(json(200, { success: true, result: { models } }));
      const page = await tolerant.listModels();
      expect(page.total).toBe(3);
      expect(page.models[0]).toMatchObject({
        id: 'acme/motion:2',
        base: 'acme',
        slug: 'motion',
        name: 'acme/motion:2',
        media: 'video',
        extra: { any: 1 },
      });
      expect(page.models[1]).toMatchObject({ media: 'image', version: '3' });
      expect(page.models[1]).not.toHaveProperty('parameters');
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(/^ignored result\.models\.1\.parameters/);
      server.script(json(200, { success: true, result: { tier: 5, limits: { retentionDays: 9, rate: 'x' } } }));
      const usage = await tolerant.getUsage();
      expect(usage).toEqual({ limits: { retentionDays: 9 } });
      expect(tolerant.retentionDays).toBe(9);
      expect(tolerant.tier).toBeNull();
      expect(notices).toHaveLength(3);
    } finally {
      await tolerant.dispose();
    }
  });

  it('reads a ticket without method, headers or expiry', async () => {
    server.script(json(200, { success: true, result: { id: 'upl_1', uploadUrl: 'http://h/u', method: 'POST' } }));
    expect(await client.requestUpload({ filename: 'a.png', mime: 'image/png', size: 1 })).toEqual({
      id: 'upl_1',
      uploadUrl: 'http://h/u',
    });
  });

  it('reads the 202 under result, and under data from older services', async () => {
    const accepted = {
      id: 'gen_1',
      object: 'generation',
      operation: 'videos.generations',
      status: 'queued',
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
    };
    for (const body of [
      { success: true, result: accepted },
      { success: true, data: accepted },
    ]) {
      server.script(json(202, body));
      const start = await client.submitGeneration(
        'videos.generations',
        { model: 'a/b', prompt: 'x' },
        { idempotencyKey: 'k' },
      );
      expect(start).toMatchObject({ async: true, generation: { id: 'gen_1' } });
    }
  });

  it('finds a model in the list when GET /models/:id is missing (404 or 405), by id raw or percent-encoded', async () => {
    const listed = { success: true, result: { total: 1, models: [{ id: 'acme/motion:2' }] } };
    server.script(json(404, { success: false, message: 'nope', code: 'not_found' }), json(200, listed));
    expect((await client.getModel('acme/motion')).id).toBe('acme/motion:2');
    server.script(json(405, { success: false, message: 'nope', code: 'method_not_allowed' }), json(200, listed));
    expect((await client.getModel('acme%2Fmotion%3A2')).id).toBe('acme/motion:2');
    expect(server.requests.at(-2)?.url).toBe('/v1/models/acme%2Fmotion%3A2');
    server.script(json(404, { success: false, message: 'nope', code: 'not_found' }), json(200, listed));
    expect((await failure(client.getModel('acme/else'))).code).toBe('not_found_error');
  });
});

describe('one retry budget bounds the waits in all', () => {
  const tooMany = json(429, { success: false, message: 'wait', code: 'rate_limit_exceeded', retry_after: 60 });

  it('a call’s retry waits stop at its total, not at retries × the longest wait', async () => {
    // The default policy allows 3 waits of 60 s after a 429: 180 s, over the 120 s total.
    server.script(tooMany);
    const err = await failure(client.listMedia());
    expect(err.code).toBe('rate_limit_exceeded');
    expect(sleeps).toEqual([60_000, 60_000]);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.maxTotalWaitMs);
  });

  it('calls that share a budget (a job’s runner trying again) wait within its one total', async () => {
    server.script(tooMany);
    const budget = new RetryBudget(100_000);
    for (let i = 0; i < 5; i++) await failure(client.listMedia(undefined, { retryBudget: budget }));
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(100_000);
    expect(budget.spentMs).toBe(60_000);
  });
});

describe('every retry wait is said first', () => {
  it('a 5xx and a broken connection are tried again after a backoff the caller is told of', async () => {
    server.script(
      json(503, { success: false, message: 'busy', code: 'provider_unavailable' }),
      reset,
      json(200, emptyPage),
    );
    const notices: WaitNotice[] = [];
    await expect(client.listMedia(undefined, { onWait: (n) => notices.push(n) })).resolves.toEqual({
      total: 0,
      medias: [],
    });
    expect(notices.map((n) => ({ ...n, message: n.message?.split(':')[0] }))).toEqual([
      { reason: 'retry', ms: sleeps[0], what: 'GET /media', message: 'busy' },
      { reason: 'retry', ms: sleeps[1], what: 'GET /media', message: expect.any(String) as string },
    ]);
    expect(sleeps).toHaveLength(2);
  });
});

describe('rate limits', () => {
  it('waits retry_after on 429 and then succeeds', async () => {
    server.script(
      json(429, {
        success: false,
        message: 'Rate limit exceeded, retry in 7 seconds',
        code: 'rate_limit_exceeded',
        retry_after: 7,
      }),
      json(200, emptyPage),
    );
    await expect(client.listMedia()).resolves.toEqual({ total: 0, medias: [] });
    expect(server.requests).toHaveLength(2);
    expect(sleeps[0]).toBe(7000);
  });

  it('caps the wait and reports rate_limit with retryAfter after its retries', async () => {
    await client.dispose();
    client = createApiClient({
      baseUrl: `${server.origin}/v1`,
      getKey: () => 'k',
      clock,
      sleep: fakeSleep,
      random: () => 0,
      retry: { maxRateLimitRetries: 2, maxRateLimitWaitMs: 10_000 },
    });
    server.script(
      json(429, { success: false, message: 'wait 3600 seconds', code: 'rate_limit_exceeded', retry_after: 3600 }),
    );
    const err = await failure(client.listMedia());
    expect(err).toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 3600, message: 'wait 3600 seconds' });
    expect(server.requests).toHaveLength(3);
    expect(sleeps.filter((s) => s >= 10_000)).toEqual([10_000, 10_000]);
  });

  it('never sends a request bound to 429: waits for X-RateLimit-Reset when nothing remains', async () => {
    const reset = Math.floor(clock.now() / 1000) + 30;
    server.script(
      json(200, emptyPage, {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '1',
        'x-ratelimit-reset': String(reset),
      }),
      json(200, emptyPage, {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(reset),
      }),
      json(200, emptyPage, {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '9',
        'x-ratelimit-reset': String(reset + 60),
      }),
    );
    await client.listMedia();
    expect(client.rateLimit).toMatchObject({ limit: 10, remaining: 1, reset });
    await client.listMedia();
    expect(sleeps).toEqual([]);
    expect(client.rateLimit.remaining).toBe(0);
    const before = clock.now();
    await client.listMedia();
    expect(sleeps).toHaveLength(1);
    expect(before + sleeps[0]!).toBeGreaterThanOrEqual(reset * 1000);
    expect(server.requests).toHaveLength(3);
  });

  it('counts requests in flight against the window', async () => {
    const reset = Math.floor(clock.now() / 1000) + 30;
    server.script(
      json(200, emptyPage, { 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': String(reset) }),
      json(200, emptyPage),
    );
    await client.listMedia();
    // Two slots left: the first two go at once, the third waits for the reset.
    await Promise.all([client.listMedia(), client.listMedia(), client.listMedia()]);
    expect(sleeps).toHaveLength(1);
  });

  it('ignores odd rate-limit headers', async () => {
    server.script(json(200, emptyPage, { 'x-ratelimit-remaining': 'lots', 'x-ratelimit-reset': '' }));
    await client.listMedia();
    await client.listMedia();
    expect(sleeps).toEqual([]);
    expect(client.rateLimit.remaining).toBeNull();
  });

  it('exposes the tier from /usage and notifies listeners', async () => {
    const usage = {
      success: true,
      result: {
        tier: 'basic',
        limits: {
          rate: { minute: 30, hour: 500, day: 5000 },
          concurrency: { image: 5, video: 2 },
          storageBytes: 1,
          retentionDays: 45,
        },
        usage: {
          requests: { minute: 1, hour: 1, day: 1 },
          running: { image: 0, video: 0 },
          storageBytes: 0,
          cost: { total: 0, byKey: [] },
        },
      },
    };
    server.script(
      json(200, usage, { 'x-ratelimit-limit': '30', 'x-ratelimit-remaining': '29', 'x-ratelimit-reset': '1767225660' }),
    );
    const states: unknown[] = [];
    client.onStateChange((s) => states.push(s));
    expect(client.retentionDays).toBeNull();
    await client.getUsage();
    expect(client.tier).toBe('basic');
    // The account's own figure (custom limits: 45, where the basic tier keeps 30).
    expect(client.retentionDays).toBe(45);
    expect(states.at(-1)).toMatchObject({ tier: 'basic', rateLimit: { limit: 30, remaining: 29 } });
  });
});

describe('retries', () => {
  it('retries a GET after a connection reset and after a 5xx', async () => {
    server.script(reset, json(502, { success: false, message: 'bad gateway', code: 'x' }), json(200, emptyPage));
    await expect(client.listMedia()).resolves.toMatchObject({ total: 0 });
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[1]!).toBeGreaterThanOrEqual(sleeps[0]!);
  });

  it('reports a network error after its retries', async () => {
    server.script(reset);
    const err = await failure(client.listMedia());
    expect(err.code).toBe('network_error');
    expect(server.requests).toHaveLength(5);
  });

  it('retries a generation after a dropped connection with the same Idempotency-Key', async () => {
    server.script(reset, json(200, generation));
    await client.generateVideo({ model: 'a/b', prompt: 'x' }, { idempotencyKey: 'gen-123' });
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['gen-123', 'gen-123']);
    expect(server.requests[0]!.body).toBe(server.requests[1]!.body);
  });

  it('does not retry a generation the service refused with a 5xx', async () => {
    server.script(
      json(503, { success: false, message: 'all providers failed', code: 'provider_unavailable' }),
      json(200, generation),
    );
    expect((await failure(client.generateVideo({ model: 'a/b', prompt: 'x' }, { idempotencyKey: 'k' }))).code).toBe(
      'provider_unavailable',
    );
    expect(server.requests).toHaveLength(1);
  });
});

describe('deadlines and cancelling', () => {
  it('reports timeout when the deadline passes', async () => {
    server.script(hang);
    const err = await failure(client.listMedia({}, { timeoutMs: 150 }));
    expect(err.code).toBe('timeout');
  });

  it('reports cancelled when the caller aborts', async () => {
    server.script(hang);
    const controller = new AbortController();
    const pending = client.generateVideo(
      { model: 'a/b', prompt: 'x' },
      { idempotencyKey: 'k', signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 50);
    expect((await failure(pending)).code).toBe('canceled');
  });

  it('waits for slow bodies without a timeout of its own', async () => {
    server.script((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify(emptyPage);
      res.write(text.slice(0, 5));
      setTimeout(() => res.end(text.slice(5)), 300);
    });
    await expect(client.listMedia()).resolves.toMatchObject({ total: 0 });
  });
});

describe('the key', () => {
  it('goes to the base origin only, never to another origin, not even after a redirect', async () => {
    server.script(json(200, emptyPage));
    await client.listMedia();
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-secret-key');

    foreign.script((_req, res) => res.end('bytes'));
    const direct = await client.fetch(`${foreign.origin}/media/med_1.mp4`);
    await direct.body.text();

    server.script((_req, res) => {
      res.writeHead(302, { location: `${foreign.origin}/cdn/med_1.mp4` });
      res.end();
    });
    const redirected = await client.fetch(`${server.origin}/v1/media/med_1/content`);
    expect(await redirected.body.text()).toBe('bytes');
    expect(redirected.url).toBe(`${foreign.origin}/cdn/med_1.mp4`);

    expect(foreign.requests).toHaveLength(2);
    for (const r of foreign.requests) {
      expect(r.headers.authorization).toBeUndefined();
      expect(JSON.stringify(r.headers)).not.toContain('sk-secret-key');
    }
    // Same host, other port is another origin too.
    expect(new URL(foreign.origin).hostname).toBe(new URL(server.origin).hostname);
  });

  it('is not sent when auth is turned off (signed upload URLs)', async () => {
    server.script((_req, res) => res.end());
    const res = await client.fetch(`${server.origin}/upload/abc`, { method: 'PUT', body: 'x', auth: false });
    await res.body.dump();
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });
});
