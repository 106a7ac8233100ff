import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProviderAdapter } from '../../../server/providers/remote/contract.ts';
import { acmeProvider } from '../../support/remote/acme-adapter.ts';
import { acmeSignature, deliverWebhook, startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import type { SampleMedia } from '../../support/remote/media.ts';
import { freePort } from '../../support/postgres.ts';
import { openTestDatabase, startTestService, testDatabaseFor } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

const REQUEST = { model: 'clipdesk/motion', size: '360p', duration: 2, routing: 'cheapest', prompt: 'a red kite' };
const TIMINGS = { pollInitialMs: 5, pollMaxMs: 20, jitter: 0.2, stallMs: 500, requestTimeoutMs: 5_000 };

let media: SampleMedia;
let fake: AcmeFake;
let t: TestService;
let c: TestClient;

beforeAll(async () => {
  media = await sampleMedia();
});
beforeEach(async () => {
  fake = await startAcmeFake();
  fake.files.set('clip.mp4', { body: media.mp4 });
});
afterEach(async () => {
  await t.stop();
  await fake.close();
});

async function start(
  opts: {
    publicUrl?: string;
    port?: number;
    timings?: Record<string, number>;
    key?: string;
    adapt?: (adapter: ProviderAdapter) => ProviderAdapter;
    nodes?: 1;
  } = {},
) {
  const made = acmeProvider({
    id: 'luma',
    slug: 'acme',
    models: [
      { model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p', '720p'] },
      { model: 'clipdesk/still', price: 0.0005, features: ['text_to_image', 'seed'], sizes: ['1024x1024'] },
    ],
  });
  const provider = opts.adapt ? { ...made, adapter: opts.adapt(made.adapter) } : made;
  t = await startTestService({
    remoteProviders: [provider],
    providerEnv: {},
    providerKeys: { luma: opts.key ?? fake.key },
    providerBaseUrls: { luma: fake.baseUrl },
    remoteTimings: { ...TIMINGS, ...opts.timings },
    ...(opts.publicUrl !== undefined ? { publicUrl: opts.publicUrl, port: opts.port } : {}),
    ...(opts.nodes !== undefined ? { nodes: opts.nodes } : {}),
  });
  c = await t.client('remote-user');
}

function submitCalls(): number {
  return fake.requests.filter((r) => r.path === '/v1/jobs' && r.method === 'POST').length;
}

describe('generation through a remote provider', () => {
  it('submits once, polls, downloads, runs the pipeline and charges the cost the provider reports', async () => {
    fake.plan = { polls: 2, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.0123 };
    await start();
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.status).toBe(200);
    expect(res.body.stats.providerId).toBe('luma');
    expect(res.body.stats.providerSlug).toBe('acme');
    expect(res.body.stats.retries).toBe(0);
    expect(res.body.stats.generationTime).toBeGreaterThan(0);
    expect(res.body.price).toBeCloseTo(0.0123, 6);
    expect(res.body.data[0].mime).toBe('video/mp4');
    expect(fake.submissions()).toBe(1);
    // The provider got the key, the path from the offer and the request's fields.
    const job = fake.jobs.get('job_1');
    expect(job?.body).toMatchObject({ model: 'acme/clipdesk/motion', prompt: 'a red kite', duration: 2 });
    const usage = await c.call('GET', '/usage');
    expect(usage.body.result.usage.cost.total).toBeCloseTo(0.0123, 6);
    // Without --public-url no provider was given the webhook route, and it is not served.
    const body = JSON.stringify({ id: 'job_1', status: 'succeeded' });
    const hook = await fetch(`${t.service.url}/provider-webhooks/luma`, {
      method: 'POST',
      headers: { 'x-acme-signature': acmeSignature(fake.key, body) },
      body,
    });
    expect(hook.status).toBe(404);
  });

  it('a job another node committed first (its row gone) is not committed again: nothing stored, nothing charged', async () => {
    fake.plan = { polls: 40, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.0123 };
    await start();
    const answer = c.call('POST', '/videos/generations', REQUEST);
    // What a second node's commit of the same job leaves (job-claims.ts: a node whose database
    // connections were down during a restart looks gone, and another may resume its job): no row.
    const db = await openTestDatabase(t.dataDir);
    try {
      let removed = 0;
      for (let i = 0; i < 400 && removed === 0; i++) {
        removed = (await db.run('DELETE FROM provider_jobs')).changes;
        if (removed === 0) await new Promise((r) => setTimeout(r, 10));
      }
      expect(removed).toBe(1);
    } finally {
      await db.close();
    }
    const res = await answer;
    expect(res.status).toBe(500);
    expect(res.body.message).toContain('finished by another node');
    expect((await c.call('GET', '/media?user=me')).body.result.total).toBe(0);
    expect((await c.call('GET', '/usage')).body.result.usage.cost.total).toBe(0);
  });

  it('makes n images in one job, one item each, charged per image', async () => {
    fake.files.set('still.png', { body: media.png });
    fake.plan = { polls: 1, outcome: 'succeed', outputs: ['still.png', 'still.png'] };
    await start();
    const res = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      prompt: 'a blue door',
      size: '64x64',
      n: 2,
      routing: 'cheapest',
    });
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('acme');
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data[0].mime).toBe('image/png');
    expect(res.body.price).toBeCloseTo(0.0005 * 2, 6);
    expect(fake.submissions()).toBe(1);
    expect(fake.jobs.get('job_1')?.body).toMatchObject({ count: 2, width: 64, height: 64 });
  });

  it('charges the catalog price when the provider reports none', async () => {
    await start();
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.status).toBe(200);
    expect(res.body.price).toBeCloseTo(0.001 * 2, 6);
  });
});

describe('provider_jobs', () => {
  /** Starts a generation, and once the provider has the job reads provider_jobs, then lets the job finish. */
  async function rowsWhileRunning(): Promise<string[]> {
    fake.plan = { polls: 1000, outcome: 'succeed', outputs: ['clip.mp4'] };
    const pending = c.call('POST', '/videos/generations', REQUEST);
    // Polled: the runner persisted (or chose not to persist) the job before its first wait.
    while (!fake.requests.some((r) => r.method === 'GET' && r.path === '/v1/jobs/job_1'))
      await new Promise((r) => setTimeout(r, 10));
    const db = await openTestDatabase(t.dataDir);
    let rows: string[];
    try {
      rows = (await db.all('SELECT * FROM provider_jobs')).map((r) => JSON.stringify(r));
    } finally {
      await db.close();
    }
    const job = fake.jobs.get('job_1');
    if (job) job.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    expect((await pending).status).toBe(200);
    return rows;
  }

  it('holds the job while it runs (its provider id and plan, never the key)', async () => {
    await start();
    const rows = await rowsWhileRunning();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('"provider_job_id":"job_1"');
    expect(rows[0]).toContain('a red kite');
    expect(rows[0]).not.toContain(fake.key);
  });

  it('a job whose state would carry the key is run but never persisted', async () => {
    await start({
      adapt: (adapter) => ({
        ...adapter,
        submit: async (settings, task) => {
          const job = await adapter.submit(settings, task);
          return { ...job, state: { ...job.state, token: settings.apiKey } };
        },
      }),
    });
    expect(await rowsWhileRunning()).toEqual([]);
  });
});

describe('fallback by error class', () => {
  it('a refused key: the provider turns unhealthy, is skipped during its cooldown, and the message never shows the key', async () => {
    await start({ key: 'wrong-key-SECRET-9999' });
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('swift');
    expect(res.body.stats.retries).toBe(1);
    expect(JSON.stringify(res.body)).not.toContain('SECRET');
    expect(fake.requests).toHaveLength(1);
    // In its cooldown: not even asked, and still a fallback, counted as one.
    const again = await c.call('POST', '/videos/generations', REQUEST);
    expect(again.body.stats.providerSlug).toBe('swift');
    expect(again.body.stats.retries).toBe(1);
    expect(fake.requests).toHaveLength(1);
  });

  it('a 429 with a short Retry-After is waited out, then the same provider succeeds', async () => {
    fake.submitFailures = [429];
    await start();
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('acme');
    expect(res.body.stats.retries).toBe(1);
  });

  it('a 429 with a long Retry-After falls back at once', async () => {
    fake.submitFailures = [429];
    await start({ timings: { maxRateLimitWaitSeconds: 0 } });
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.body.stats.providerSlug).toBe('swift');
    expect(fake.submissions()).toBe(0);
  });

  it('a 5xx is retried once, then falls back', async () => {
    fake.submitFailures = [500];
    await start();
    const once = await c.call('POST', '/videos/generations', REQUEST);
    expect(once.body.stats.providerSlug).toBe('acme');
    expect(once.body.stats.retries).toBe(1);
    fake.submitFailures = [502, 503];
    const twice = await c.call('POST', '/videos/generations', REQUEST);
    expect(twice.body.stats.providerSlug).toBe('swift');
    expect(twice.body.stats.retries).toBe(2);
  });

  it('a provider whose submit fails every time: each request served by the next counts the fallback, in its cooldown too', async () => {
    fake.submitFailures = Array.from({ length: 20 }, () => 500);
    await start({ timings: { failuresBeforeCooldown: 3 } });
    const retries: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await c.call('POST', '/videos/generations', REQUEST);
      expect(res.body.stats.providerSlug).toBe('swift');
      retries.push(res.body.stats.retries as number);
    }
    // Asked twice (a 5xx is retried once), twice again (the third failure in a row starts its
    // cooldown), then passed over: never 0.
    expect(retries).toEqual([2, 2, 1]);
    expect(submitCalls()).toBe(4);
  });

  it('a job the provider accepted is not submitted again when polling it keeps failing', async () => {
    fake.pollFailures = [500, 500, 500, 500, 500, 500, 500];
    await start({ timings: { maxPollErrors: 2 } });
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.body.stats.providerSlug).toBe('swift');
    expect(fake.submissions()).toBe(1);
  });

  it('an input the provider refuses is a 400, with no fallback', async () => {
    fake.submitFailures = [400];
    await start();
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request_error');
    expect((await c.call('GET', '/media?user=me')).body.result.total).toBe(0);
  });

  it('a timeout cancels the job at the provider and falls back', async () => {
    fake.plan = { polls: 0, outcome: 'never', outputs: [] };
    await start({ timings: { timeoutMs: 200 } });
    const res = await c.call('POST', '/videos/generations', REQUEST);
    expect(res.body.stats.providerSlug).toBe('swift');
    expect(fake.cancels()).toBe(1);
  });

  it('a success without output, and an output that is not a video, fall back', async () => {
    fake.plan = { polls: 0, outcome: 'no_output', outputs: [] };
    await start();
    expect((await c.call('POST', '/videos/generations', REQUEST)).body.stats.providerSlug).toBe('swift');
    fake.files.set('page.html', { body: Buffer.from('<html>nope</html>') });
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['page.html'] };
    expect((await c.call('POST', '/videos/generations', REQUEST)).body.stats.providerSlug).toBe('swift');
  });

  it("a content-policy refusal is a 422 with the provider's reason, with no fallback and no charge", async () => {
    await start();
    const res = await c.call('POST', '/videos/generations', { ...REQUEST, prompt: 'something forbidden' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('content_policy_violation');
    expect(res.body.message).toMatch(/flagged by the safety system/);
    const list = await c.call('GET', '/media?user=me');
    expect(list.body.result.total).toBe(0);
    expect(submitCalls()).toBe(1);
  });
});

describe('a service stopped mid-job', () => {
  it('does not cancel at the provider, and the next start finishes the job and charges it once', async () => {
    fake.plan = { polls: 1000, outcome: 'succeed', outputs: ['clip.mp4'] };
    await start();
    const pending = c.call('POST', '/videos/generations', REQUEST).catch(() => null);
    // Polled: the service has the job recorded (it polls only after), so the stop is mid-job. (A
    // stop between the provider's accepting and the service's reading that answer cannot know the job.)
    while (!(fake.jobs.get('job_1')?.polls ?? 0)) await new Promise((r) => setTimeout(r, 10));
    await t.service.close();
    await pending;
    expect(fake.cancels()).toBe(0);

    const job = fake.jobs.get('job_1');
    if (job) job.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    const provider = acmeProvider({
      id: 'luma',
      slug: 'acme',
      models: [{ model: 'clipdesk/motion', price: 0.001, features: ['text_to_video', 'seed'], sizes: ['360p'] }],
    });
    const { startService } = await import('../../../server/index.ts');
    const database = await testDatabaseFor(t.dataDir);
    const again = await startService({
      dataDir: t.dataDir,
      ...(database !== undefined ? { database } : {}),
      sweepIntervalMs: 0,
      remoteProviders: [provider],
      providerEnv: {},
      providerKeys: { luma: fake.key },
      providerBaseUrls: { luma: fake.baseUrl },
      remoteTimings: TIMINGS,
    });
    try {
      const client = {
        ...c,
        call: (m: string, p: string) =>
          fetch(`${again.url}${p}`, { method: m, headers: { authorization: `Bearer ${c.key}` } }),
      };
      let total = 0;
      // On PostgreSQL the job comes back from the queue (handed back at the stop, polled every 2 s):
      // looked for ten times a second. On a loaded machine that can pass the key's 100 requests a
      // minute: a 429 is waited out for the time its Retry-After names, as a client does.
      for (let i = 0; i < 300 && total === 0; i++) {
        const res = await client.call('GET', '/media?user=me');
        if (res.status === 429) {
          await res.arrayBuffer();
          await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? '1') * 1000));
          continue;
        }
        const list = (await res.json()) as { result?: { total: number } };
        expect(list.result, JSON.stringify(list)).toBeDefined();
        total = list.result!.total;
        if (total === 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(total).toBe(1);
      expect(fake.submissions()).toBe(1);
      const usage = (await (await client.call('GET', '/usage')).json()) as {
        result: { usage: { cost: { total: number } } };
      };
      expect(usage.result.usage.cost.total).toBeCloseTo(0.002, 6);
    } finally {
      await again.close();
    }
  });
});

describe('webhooks', () => {
  it('with a public URL the provider is given a webhook, whose signed delivery finishes the job', async () => {
    const port = await freePort();
    fake.plan = { polls: 1000, outcome: 'succeed', outputs: ['clip.mp4'] };
    // One node: this is the delivery that wakes the runner waiting for it. On two nodes the queue
    // may give the generation to either, and a delivery that reaches the other one is relayed as a
    // hint to poll (provider-jobs-nodes.test.ts covers that path).
    await start({ publicUrl: `http://127.0.0.1:${port}`, port, timings: { webhookPollMs: 60_000 }, nodes: 1 });
    const pending = c.call('POST', '/videos/generations', REQUEST);
    while (!fake.jobs.get('job_1')) await new Promise((r) => setTimeout(r, 10));
    expect(fake.jobs.get('job_1')?.body['webhook_url']).toBe(`http://127.0.0.1:${port}/v1/provider-webhooks/luma`);
    // A forged delivery is refused.
    const forged = await fetch(`http://127.0.0.1:${port}/v1/provider-webhooks/luma`, {
      method: 'POST',
      headers: { 'x-acme-signature': 'forged' },
      body: JSON.stringify({ id: 'job_1', status: 'failed' }),
    });
    expect(forged.status).toBe(401);
    // The answer is the same whether or not a job of that id is waited on here.
    const progress = async (id: string) => {
      const body = JSON.stringify({ id, status: 'running' });
      const res = await fetch(`http://127.0.0.1:${port}/v1/provider-webhooks/luma`, {
        method: 'POST',
        headers: { 'x-acme-signature': acmeSignature(fake.key, body) },
        body,
      });
      return `${res.status} ${await res.text()}`;
    };
    expect(await progress('job_1')).toBe(await progress('job_999'));
    expect(await progress('job_1')).toBe('200 {"success":true}');
    expect(await progress('job_999')).toBe('200 {"success":true}');
    expect(await deliverWebhook(fake, 'job_1', 'succeeded')).toBe(200);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.stats.providerSlug).toBe('acme');
    // Woken by the delivery, never polled (the safety poll is a minute away).
    expect(fake.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/jobs/'))).toHaveLength(0);
  });
});
