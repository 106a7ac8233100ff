import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Generation } from '../../../shared/api/index.ts';
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
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-remote-restart-'));
    const fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: (await sampleMedia()).mp4 });
    fake.plan = { polls: 3, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.0042 };
    try {
      const key = (await run(['keys', 'create', '--user', 'jo', '--tier', 'enterprise', '--data', dir], dir)).trim();
      const first = await serveAcme(dir, fake, 'submitted');
      const died = exited(first.child);
      const accepted = await clientFor(first.url, key).call(
        'POST',
        '/videos/generations',
        { model: 'clipdesk/motion', size: '360p', duration: 2, provider: 'acme', prompt: 'a harbour at dawn' },
        ASYNC,
      );
      expect(accepted.status).toBe(202);
      expect(await died).toBe('SIGKILL');
      expect(fake.submissions()).toBe(1);

      const again = await serveAcme(dir, fake);
      try {
        const c = clientFor(again.url, key);
        const done = await poll(c, accepted.body.result.id as string);
        expect(done.status).toBe('succeeded');
        expect(done.price).toBeCloseTo(0.0042, 6);
        expect(done.stats?.providerId).toBe('luma');
        expect(fake.submissions()).toBe(1);
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBeCloseTo(0.0042, 6);
        expect((await c.call('GET', '/media?user=me')).body.result.total).toBe(1);
      } finally {
        again.child.kill('SIGTERM');
        await exited(again.child);
      }
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('remote variations killed after the first item was submitted poll that job and submit only the rest: charged once each', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-variations-restart-'));
    const fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: (await sampleMedia()).mp4 });
    fake.plan = { polls: 3, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.0042 };
    try {
      const key = (await run(['keys', 'create', '--user', 'lu', '--tier', 'enterprise', '--data', dir], dir)).trim();
      const first = await serveAcme(dir, fake, 'submitted');
      const died = exited(first.child);
      const c1 = clientFor(first.url, key);
      // The source, rendered locally: no provider job, so the crash point is not reached yet.
      const source = await c1.call('POST', '/videos/generations', {
        model: 'clipdesk/motion',
        size: '360p',
        duration: 2,
        provider: 'swift',
        prompt: 'a lighthouse',
      });
      expect(source.status).toBe(200);
      const sourceCost = (await c1.call('GET', '/usage')).body.result.usage.cost.total as number;
      const accepted = await c1.call(
        'POST',
        '/videos/variations',
        { media_id: source.body.data[0].id as string, n: 2, provider: 'acme' },
        ASYNC,
      );
      expect(accepted.status).toBe(202);
      // Killed once the provider had accepted the first item's job.
      expect(await died).toBe('SIGKILL');
      expect(fake.submissions()).toBe(1);

      const again = await serveAcme(dir, fake);
      try {
        const c = clientFor(again.url, key);
        const done = await poll(c, accepted.body.result.id as string);
        expect(done.status).toBe('succeeded');
        expect(done.data).toHaveLength(2);
        // The first item's job was polled, not canceled and paid for again.
        expect(fake.submissions()).toBe(2);
        expect(fake.cancels()).toBe(0);
        expect(done.price).toBeCloseTo(2 * 0.0042, 6);
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBeCloseTo(sourceCost + 2 * 0.0042, 6);
      } finally {
        again.child.kill('SIGTERM');
        await exited(again.child);
      }
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a generation that cannot run after the restart ends failed, with the reason, and charges nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-async-restart-fail-'));
    const fake = await startAcmeFake();
    fake.plan = { polls: 1_000_000, outcome: 'succeed', outputs: ['clip.mp4'] };
    try {
      const key = (await run(['keys', 'create', '--user', 'kit', '--tier', 'enterprise', '--data', dir], dir)).trim();
      const first = await serveAcme(dir, fake, 'submitted');
      const died = exited(first.child);
      const accepted = await clientFor(first.url, key).call(
        'POST',
        '/videos/generations',
        { model: 'clipdesk/motion', size: '360p', duration: 2, provider: 'acme', prompt: 'a harbour at dusk' },
        ASYNC,
      );
      expect(accepted.status).toBe(202);
      expect(await died).toBe('SIGKILL');

      // Restarted without the Acme provider: its job cannot be followed any more.
      const again = await serveProcess(dir, { env: await env(dir) });
      try {
        const c = clientFor(again.url, key);
        const done = await poll(c, accepted.body.result.id as string);
        expect(done.status).toBe('failed');
        expect(done.error?.type).toBe('provider_unavailable');
        expect(done.error?.message).toMatch(/cannot resume/);
        expect(done.data).toBeUndefined();
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBe(0);
        expect((await c.call('GET', '/generations?status=failed')).body.result.total).toBe(1);
      } finally {
        again.child.kill('SIGTERM');
        await exited(again.child);
      }
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
