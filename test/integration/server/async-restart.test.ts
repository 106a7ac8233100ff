import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Generation } from '../../../shared/api/index.ts';
import { openDatabase } from '../../../server/storage/db.ts';
import { startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import { clientFor, processEnv } from './helpers.ts';
import type { TestClient } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
const SERVE_ACME = join(ROOT, 'test/support/remote/serve-acme.ts');
const ASYNC = { prefer: 'respond-async' };

async function run(args: string[], dataDir: string): Promise<string> {
  const env = await processEnv(dataDir);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', fail);
    child.on('close', () => done(stdout));
  });
}

function env(dataDir: string, crashAt?: string): Promise<NodeJS.ProcessEnv> {
  // On PostgreSQL the killed node's generation waits for its queue lease to lapse: the shortest.
  const e: NodeJS.ProcessEnv = { ...process.env, CLIPDESK_LEASE_TIMEOUT: '10' };
  if (crashAt) e['CLIPDESK_TEST_CRASH_AT'] = crashAt;
  else delete e['CLIPDESK_TEST_CRASH_AT'];
  return processEnv(dataDir, e);
}

/** The service with the Acme provider in a process of its own (serve-acme.ts). */
async function serveAcme(
  dataDir: string,
  fake: AcmeFake,
  crashAt?: string,
): Promise<{ child: ChildProcess; url: string }> {
  const base = await env(dataDir, crashAt);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SERVE_ACME], {
      cwd: ROOT,
      env: { ...base, CLIPDESK_DATA: dataDir, ACME_BASE_URL: fake.baseUrl, ACME_KEY: fake.key },
    });
    let output = '';
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output);
      if (m) done({ child, url: m[1] ?? '' });
    });
    child.once('exit', (code) => fail(new Error(`serve-acme exited ${code}: ${output}`)));
  });
}

async function poll(c: TestClient, id: string): Promise<Generation> {
  for (;;) {
    const res = await c.call('GET', `/generations/${id}`);
    const g = Generation.parse(res.body.result);
    if (['succeeded', 'failed', 'canceled'].includes(g.status)) return g;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** What the Acme fake charges for each job in the remote cases. */
const JOB_COST = 0.0042;

/**
 * A remote case across a kill -9: the service with Acme is killed once the provider has accepted
 * the first job of what `submit` asks for (it answers the generation's id), then started again
 * (with Acme, unless `restart` says otherwise); `check` gets the new service's client and the
 * generation once final.
 */
async function acrossAcmeRestart(
  user: string,
  submit: (c: TestClient) => Promise<string>,
  check: (c: TestClient, done: Generation, fake: AcmeFake) => Promise<void>,
  options: { plan?: AcmeFake['plan']; restart?: 'with-acme' | 'without-acme' } = {},
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-remote-restart-'));
  const fake = await startAcmeFake();
  fake.files.set('clip.mp4', { body: (await sampleMedia()).mp4 });
  fake.plan = options.plan ?? { polls: 3, outcome: 'succeed', outputs: ['clip.mp4'], cost: JOB_COST };
  try {
    const key = (await run(['keys', 'create', '--user', user, '--tier', 'enterprise', '--data', dir], dir)).trim();
    const first = await serveAcme(dir, fake, 'submitted');
    const died = exited(first.child);
    const id = await submit(clientFor(first.url, key));
    expect(await died).toBe('SIGKILL');
    expect(fake.submissions()).toBe(1);

    const again =
      options.restart === 'without-acme'
        ? await serveProcess(dir, { env: await env(dir) })
        : await serveAcme(dir, fake);
    try {
      const c = clientFor(again.url, key);
      await check(c, await poll(c, id), fake);
    } finally {
      again.child.kill('SIGTERM');
      await exited(again.child);
    }
  } finally {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Asks for a video from Acme, asynchronously; answers the generation's id. */
function acmeVideo(prompt: string): (c: TestClient) => Promise<string> {
  return async (c) => {
    const accepted = await c.call(
      'POST',
      '/videos/generations',
      { model: 'clipdesk/motion', size: '360p', duration: 2, provider: 'acme', prompt },
      ASYNC,
    );
    expect(accepted.status).toBe(202);
    return accepted.body.result.id as string;
  };
}

describe('asynchronous generations survive a restart of the service', () => {
  it('a local render killed before its items were committed runs again and succeeds, charged once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-restart-'));
    try {
      const key = (await run(['keys', 'create', '--user', 'ida', '--tier', 'enterprise', '--data', dir], dir)).trim();
      const first = await serveProcess(dir, { env: await env(dir, 'placed') });
      const died = exited(first.child);
      const accepted = await clientFor(first.url, key).call(
        'POST',
        '/images/generations',
        { model: 'clipdesk/still', prompt: 'a kite over the dunes', size: '64x64', n: 2 },
        ASYNC,
      );
      expect(accepted.status).toBe(202);
      const id = accepted.body.result.id as string;
      // Killed with both items placed but nothing committed.
      expect(await died).toBe('SIGKILL');
      // The stored body no longer plans (an unknown model): the restart runs from the stored plan.
      const db = openDatabase(dir);
      await db.run(`UPDATE generations SET request = '{"model":"nobody/none","prompt":"x"}' WHERE id = ?`, id);
      await db.close();

      const again = await serveProcess(dir, { env: await env(dir) });
      try {
        const c = clientFor(again.url, key);
        const done = await poll(c, id);
        expect(done.status).toBe('succeeded');
        expect(done.data).toHaveLength(2);
        const list = await c.call('GET', '/media?user=me&limit=100');
        expect(list.body.result.total).toBe(2);
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBeCloseTo(done.price ?? -1, 6);
      } finally {
        again.child.kill('SIGTERM');
        await exited(again.child);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a remote job killed while the provider works resumes (no second submission) and succeeds, charged once', async () => {
    await acrossAcmeRestart('jo', acmeVideo('a harbour at dawn'), async (c, done, fake) => {
      expect(done.status).toBe('succeeded');
      expect(done.price).toBeCloseTo(JOB_COST, 6);
      expect(done.stats?.providerId).toBe('luma');
      expect(fake.submissions()).toBe(1);
      const usage = await c.call('GET', '/usage');
      expect(usage.body.result.usage.cost.total).toBeCloseTo(JOB_COST, 6);
      expect((await c.call('GET', '/media?user=me')).body.result.total).toBe(1);
    });
  });

  it('remote variations killed after the first item was submitted poll that job and submit only the rest: charged once each', async () => {
    let sourceCost = 0;
    await acrossAcmeRestart(
      'lu',
      async (c) => {
        // The source, rendered locally: no provider job, so the crash point is not reached yet.
        const source = await c.call('POST', '/videos/generations', {
          model: 'clipdesk/motion',
          size: '360p',
          duration: 2,
          provider: 'swift',
          prompt: 'a lighthouse',
        });
        expect(source.status).toBe(200);
        sourceCost = (await c.call('GET', '/usage')).body.result.usage.cost.total as number;
        const accepted = await c.call(
          'POST',
          '/videos/variations',
          { media_id: source.body.data[0].id as string, n: 2, provider: 'acme' },
          ASYNC,
        );
        expect(accepted.status).toBe(202);
        return accepted.body.result.id as string;
      },
      async (c, done, fake) => {
        expect(done.status).toBe('succeeded');
        expect(done.data).toHaveLength(2);
        // The first item's job was polled, not canceled and paid for again.
        expect(fake.submissions()).toBe(2);
        expect(fake.cancels()).toBe(0);
        expect(done.price).toBeCloseTo(2 * JOB_COST, 6);
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBeCloseTo(sourceCost + 2 * JOB_COST, 6);
      },
    );
  });

  it('a generation that cannot run after the restart ends failed, with the reason, and charges nothing', async () => {
    await acrossAcmeRestart(
      'kit',
      acmeVideo('a harbour at dusk'),
      async (c, done) => {
        expect(done.status).toBe('failed');
        expect(done.error?.type).toBe('provider_unavailable');
        expect(done.error?.message).toMatch(/cannot resume/);
        expect(done.data).toBeUndefined();
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBe(0);
        expect((await c.call('GET', '/generations?status=failed')).body.result.total).toBe(1);
      },
      // Restarted without the Acme provider: its job cannot be followed any more.
      { plan: { polls: 1_000_000, outcome: 'succeed', outputs: ['clip.mp4'] }, restart: 'without-acme' },
    );
  });
});
