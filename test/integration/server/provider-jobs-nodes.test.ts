import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acmeMotionSettings, WEBHOOK_ONLY_TIMINGS } from '../../support/remote/acme-adapter.ts';
import { acmeSignature, deliverWebhook, startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import type { SampleMedia } from '../../support/remote/media.ts';
import { clientFor, onPostgres, openTestDatabase, startTestService, testDatabaseFor } from './helpers.ts';
import type { TestService } from './helpers.ts';
import type { StartServiceOptions } from '../../../server/index.ts';
import type { ProviderAdapter } from '../../../server/providers/remote/contract.ts';
import { freePort } from '../../support/postgres.ts';
import { untilTrue, within } from '../../support/until.ts';

/**
 * Remote provider jobs across two nodes on one PostgreSQL database (docs/service.md):
 * - a provider's webhook lands on whichever node the load balancer picks; the node whose runner
 *   waits on that job hears of it at once (LISTEN/NOTIFY, server/providers/remote/webhook-relay.ts)
 *   rather than at its safety poll, here ten minutes away;
 * - a synchronous generation's provider job left unfinished is resumed by one node only when two
 *   start at once (server/providers/remote/job-claims.ts).
 * PostgreSQL only: on SQLite there is one node, whose memory is the whole story.
 */
const REQUEST = { model: 'clipdesk/motion', size: '360p', duration: 2, routing: 'cheapest', prompt: 'a paper boat' };
// Only a webhook or its relay can finish a job within the test: the safety poll is ten minutes away.
const TIMINGS = WEBHOOK_ONLY_TIMINGS;

let media: SampleMedia;
let fake: AcmeFake;
const started: TestService[] = [];

beforeAll(async () => {
  media = await sampleMedia();
});
afterEach(async () => {
  // The first started owns the database's data directory: the others stop before it.
  for (const s of started.splice(0).reverse()) await s.stop();
  await fake.close();
});

/**
 * A node (nodes: 1, so that the test says which node a request goes to) of the provider's fake; the
 * first started, or another on its database and files.
 */
async function node(
  options: {
    port?: number;
    publicUrl?: string;
    baseUrl?: string;
    claimMs?: number;
    runs?: false;
    adapt?: (adapter: ProviderAdapter) => ProviderAdapter;
  } = {},
): Promise<TestService> {
  const first = started[0];
  const base = nodeOptions(options.baseUrl);
  const adapt = options.adapt;
  const service = await startTestService({
    ...base,
    ...(adapt ? { remoteProviders: base.remoteProviders?.map((p) => ({ ...p, adapter: adapt(p.adapter) })) } : {}),
    // runs: false, a node that runs no generation (--generation-workers 0): the other one runs them.
    ...(options.runs === false ? { generationQueue: { workers: 0 } } : {}),
    ...(options.claimMs !== undefined ? { remoteTimings: { ...TIMINGS, providerJobLeaseMs: options.claimMs } } : {}),
    nodes: 1,
    // Another node: its own data directory (work files), the first's database and files.
    ...(first ? { database: await testDatabaseFor(first.dataDir), store: first.store, clock: first.clock } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {}),
  });
  started.push(service);
  return service;
}

const polls = (jobId: string) => fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/jobs/${jobId}`);

describe.skipIf(!onPostgres)('provider webhooks across two nodes', () => {
  it('a delivery to the node not running the job finishes the generation on the other, long before its safety poll', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    // The provider's webhooks go to B (the public URL, as a load balancer would send them there).
    const portB = await freePort();
    const publicUrl = `http://127.0.0.1:${portB}`;
    // A renews its claims on provider jobs every 200 ms.
    const a = await node({ publicUrl, claimMs: 600 });
    await node({ port: portB, publicUrl, runs: false });
    const { key } = await a.service.createKey({ user: 'hooks' });
    const pending = clientFor(a.service.url, key).call('POST', '/videos/generations', REQUEST);
    await untilTrue('the job at the provider', () => fake.jobs.has('job_1'));
    expect(fake.jobs.get('job_1')?.body['webhook_url']).toBe(`${publicUrl}/v1/provider-webhooks/luma`);
    const db = await openTestDatabase(a.dataDir);
    // The synchronous request is a row and a queue job (sync-generation.ts): the job is recorded as
    // its generation's, which the queue's lease covers (no claim of its own, job-claims.ts).
    await untilTrue('the job recorded', async () => (await db.all('SELECT id FROM provider_jobs')).length === 1);
    const [recorded] = await db.all<{ generation_id: string | null }>('SELECT generation_id FROM provider_jobs');
    expect(recorded?.generation_id).toMatch(/^gen_/);
    // A's runner is waiting (its first wait is the safety poll): nothing has asked the provider.
    await new Promise((r) => setTimeout(r, 200));
    expect(polls('job_1')).toHaveLength(0);

    // A forged delivery is refused by B, and reaches nobody.
    const forged = await fetch(`${publicUrl}/v1/provider-webhooks/luma`, {
      method: 'POST',
      headers: { 'x-acme-signature': 'forged' },
      body: JSON.stringify({ id: 'job_1', status: 'succeeded' }),
    });
    expect(forged.status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(polls('job_1')).toHaveLength(0);

    expect(await deliverWebhook(fake, 'job_1', 'succeeded')).toBe(200);
    const res = await within(30_000, pending);
    expect(res === 'still waiting' ? res : [res.status, res.body.stats.providerSlug]).toEqual([200, 'acme']);
    // Woken by B's forward, A asked the provider for the outcome once (the payload carries no outputs).
    expect(polls('job_1')).toHaveLength(1);
    await db.close();
  });

  it('a delivery that beats the submit’s answer is kept on the submitting node too (after the nodes reconnected); one for a job nobody submitted is not', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    const portB = await freePort();
    const publicUrl = `http://127.0.0.1:${portB}`;
    const deliver = (id: string) => {
      const body = JSON.stringify({ id, status: 'succeeded', outputs: [`${fake.baseUrl}/files/clip.mp4`] });
      return fetch(`${publicUrl}/v1/provider-webhooks/luma`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-acme-signature': acmeSignature(fake.key, body) },
        body,
      }).then(async (res) => `${res.status} ${await res.text()}`);
    };
    // The provider delivers to B before its answer to A's first submit reaches A's runner.
    const answers: string[] = [];
    const a = await node({
      publicUrl,
      adapt: (adapter) => ({
        ...adapter,
        async submit(settings, task) {
          const job = await adapter.submit(settings, task);
          if (answers.length === 0) answers.push(await deliver(job.id));
          return job;
        },
      }),
    });
    await node({ port: portB, publicUrl, runs: false });
    const { key } = await a.service.createKey({ user: 'hooks-early' });

    // The nodes listen again after their connections are cut (a database restart would do that).
    await cutListeners(a.dataDir);

    // A delivery for a job nobody has submitted is answered like any, and kept by no node: the
    // job of that id submitted later is not woken by it (its safety poll is ten minutes away).
    expect(await deliver('job_2')).toBe('200 {"success":true}');
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    // Polled within moments of the submit; the rest is the render's pipeline (slow on a loaded machine).
    const res = await within(120_000, clientFor(a.service.url, key).call('POST', '/videos/generations', REQUEST));
    expect(res === 'still waiting' ? res : res.status).toBe(200);
    expect(answers).toEqual(['200 {"success":true}']);
    expect(polls('job_1')).toHaveLength(1);
    // Its answer comes when the node stops (after the test): only its wait matters here.
    const secondCall = clientFor(a.service.url, key).call('POST', '/videos/generations', REQUEST);
    secondCall.catch(() => undefined);
    expect(await within(1_500, secondCall)).toBe('still waiting');
    expect(polls('job_2')).toHaveLength(0);
  }, 180_000);

  it('a runner whose node lost its LISTEN connection asks its provider once the node listens again', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    fake.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
    const portB = await freePort();
    const publicUrl = `http://127.0.0.1:${portB}`;
    const a = await node({ publicUrl });
    await node({ port: portB, publicUrl, runs: false });
    const { key } = await a.service.createKey({ user: 'hooks-reconnect' });
    const pending = clientFor(a.service.url, key).call('POST', '/videos/generations', REQUEST);
    await untilTrue('the job at the provider', () => fake.jobs.has('job_1'));
    await new Promise((r) => setTimeout(r, 200));
    expect(polls('job_1')).toHaveLength(0);
    // A delivery sent while A was not listening would be lost: A polls every job it waits on.
    await cutListeners(a.dataDir);
    const res = await within(30_000, pending);
    expect(res === 'still waiting' ? res : res.status).toBe(200);
    expect(polls('job_1')).toHaveLength(1);
  });
});

/** Ends every node's LISTEN connection, as a database restart would, and waits until they listen again. */
async function cutListeners(dataDir: string): Promise<void> {
  const db = await openTestDatabase(dataDir);
  // This test's database only: the cluster is shared with the other test files of the run.
  const listening =
    "query LIKE 'LISTEN clipdesk_provider_webhooks%' AND pid <> pg_backend_pid() AND datname = current_database()";
  try {
    const cut = await db.all(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${listening}`);
    expect(cut).toHaveLength(2);
    await untilTrue(
      'both nodes listening again',
      async () => (await db.all(`SELECT pid FROM pg_stat_activity WHERE ${listening}`)).length === 2,
    );
  } finally {
    await db.close();
  }
}

describe.skipIf(!onPostgres)('a provider job left unfinished, and two nodes starting', () => {
  it('is polled and finished by one node only, charged once', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    fake.plan = { polls: 1_000_000, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.0042 };
    // A node stops while its synchronous generation's job runs at the provider: the job stays
    // recorded (provider_jobs), to be polled, never submitted again.
    const first = await node();
    const { key } = await first.service.createKey({ user: 'resume-once' });
    const lost = clientFor(first.service.url, key).call('POST', '/videos/generations', REQUEST);
    await untilTrue('the job being polled', () => polls('job_1').length >= 2);
    await first.service.close();
    expect((await lost).status).toBe(503);
    const job = fake.jobs.get('job_1');
    if (job) job.plan = { ...job.plan, polls: job.polls + 3 };
    const before = polls('job_1').length;

    // Two nodes start at once on that database, each reaching the provider by another host name
    // (the same fake), so that the fake tells whose polls it got.
    const [b] = await Promise.all([node(), node({ baseUrl: fake.baseUrl.replace('127.0.0.1', 'localhost') })]);
    const db = await openTestDatabase(first.dataDir);
    try {
      await untilTrue('the job finished', async () => (await db.all('SELECT id FROM provider_jobs')).length === 0);
      const hosts = new Set(
        polls('job_1')
          .slice(before)
          .map((r) => r.headers['host']),
      );
      expect(hosts.size).toBe(1);
      expect(await db.all('SELECT id FROM media')).toHaveLength(1);
    } finally {
      await db.close();
    }
    expect(fake.submissions()).toBe(1);
    const usage = await clientFor(b.service.url, key).call('GET', '/usage');
    expect(usage.body.result.usage.cost.total).toBeCloseTo(0.0042, 6);
  });
});

describe.skipIf(!onPostgres)('a provider job held by a node whose machine vanished', () => {
  it('is left to it until its claim lapses, then resumed by another node', async () => {
    fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    fake.plan = { polls: 1_000_000, outcome: 'succeed', outputs: ['clip.mp4'] };
    const first = await node();
    const { key } = await first.service.createKey({ user: 'resume-lapsed' });
    const lost = clientFor(first.service.url, key).call('POST', '/videos/generations', REQUEST);
    await untilTrue('the job being polled', () => polls('job_1').length >= 2);
    await first.service.close();
    expect((await lost).status).toBe(503);
    const job = fake.jobs.get('job_1');
    if (job) job.plan = { ...job.plan, polls: job.polls + 2 };
    const before = polls('job_1').length;

    // What a node whose machine vanished leaves: its claim, and its session, which the server keeps
    // until TCP keepalive gives up on it (a killed process's session ends at once, and its claims
    // with it: remote-resume.test.ts).
    const vanished = 'clipdesk-node:a-host-that-vanished';
    const session = new pg.Client({
      connectionString: await testDatabaseFor(first.dataDir),
      application_name: vanished,
    });
    await session.connect();
    const db = await openTestDatabase(first.dataDir);
    try {
      const [row] = await db.all<{ id: string; generation_id: string }>('SELECT id, generation_id FROM provider_jobs');
      // A job no queue job covers, as a synchronous request of an earlier build (or of a one-machine
      // service, imported) recorded it: its claim is what keeps other nodes off it.
      await db.run("DELETE FROM pgboss.job WHERE data->>'generationId' = ?", row?.generation_id ?? '');
      await db.run('DELETE FROM generations WHERE id = ?', row?.generation_id ?? '');
      await db.run('UPDATE provider_jobs SET generation_id = NULL');
      const lapses = Date.now() + 4_000;
      await db.run(
        'INSERT INTO leases (name, node, lease_until) VALUES (?, ?, ?)',
        `provider-job:${row?.id ?? ''}`,
        vanished,
        lapses,
      );
      const beforeLapse = new Promise<number>((r) =>
        setTimeout(() => r(polls('job_1').length), lapses - Date.now() - 300),
      );
      // Claims renewed and lapsed ones looked for every 300 ms.
      await node({ claimMs: 900 });
      expect(await beforeLapse).toBe(before);
      await untilTrue('the job finished', async () => (await db.all('SELECT id FROM provider_jobs')).length === 0);
      expect(polls('job_1').length).toBeGreaterThan(before);
      expect(await db.all('SELECT id FROM media')).toHaveLength(1);
      // The claim is let go of once the job is done.
      await untilTrue(
        'the claim let go of',
        async () => (await db.all("SELECT name FROM leases WHERE name LIKE 'provider-job:%'")).length === 0,
        5_000,
      );
    } finally {
      await db.close();
      await session.end();
    }
    expect(fake.submissions()).toBe(1);
  });
});

function nodeOptions(baseUrl = fake.baseUrl): Partial<StartServiceOptions> {
  return {
    ...acmeMotionSettings(fake.key, baseUrl),
    remoteTimings: TIMINGS,
  };
}
