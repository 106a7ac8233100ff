import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Generation } from '../../../shared/api/index.ts';
import { startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import { exited, runServiceCli } from '../../support/service-process.ts';
import { clientFor, onPostgres } from './helpers.ts';
import type { TestClient } from './helpers.ts';

/**
 * One service per SQLite data folder (docs/service.md, "One service per data folder"): a second
 * `serve` on a served folder exits non-zero naming the first (pid, address) and the first one's
 * generation succeeds, submitted once; `migrate` refuses beside it, `keys` works beside it; after
 * a kill -9 of the owner a new service takes the folder over at once and resumes its generation.
 *
 * The generation waits on the Acme fake (its job pending until the test lets it finish), so it is
 * surely running while the second process starts.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
const SERVE_ACME = join(ROOT, 'test/support/remote/serve-acme.ts');
const PENDING = { polls: 0, outcome: 'never', outputs: [] } as const;

let dir: string;
let fake: AcmeFake;
let key: string;
const children: ChildProcess[] = [];

/** The service with the Acme provider in a process of its own (serve-acme.ts), once it listens. */
function serveAcme(): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SERVE_ACME], {
      cwd: ROOT,
      env: { ...process.env, CLIPDESK_DATA: dir, ACME_BASE_URL: fake.baseUrl, ACME_KEY: fake.key },
    });
    children.push(child);
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

/**
 * `clipdesk-service serve` on the folder: how it ended (its exit code and stderr), or 'listening'
 * should it serve (it is then stopped: that is the failure this file guards against).
 */
function secondServe(): Promise<{ code: number | null; stderr: string } | 'listening'> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', dir], { cwd: ROOT });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      if (!d.toString().includes('listening on')) return;
      child.kill('SIGKILL');
      done('listening');
    });
    child.once('exit', (code) => done({ code, stderr }));
  });
}

async function accepted(c: TestClient, prompt: string): Promise<string> {
  const res = await c.call(
    'POST',
    '/videos/generations',
    { model: 'clipdesk/motion', size: '360p', duration: 2, provider: 'acme', prompt },
    { prefer: 'respond-async' },
  );
  expect(res.status).toBe(202);
  return res.body.result.id as string;
}

async function final(c: TestClient, id: string): Promise<Generation> {
  for (;;) {
    const g = Generation.parse((await c.call('GET', `/generations/${id}`)).body.result);
    if (['succeeded', 'failed', 'canceled'].includes(g.status)) return g;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The fake's jobs for the generation of `prompt`. */
function jobsFor(prompt: string) {
  return [...fake.jobs.values()].filter((j) => JSON.stringify(j.body).includes(prompt));
}

/** Lets the fake's job for the generation of `prompt` finish with a file. */
function finishJob(prompt: string): void {
  const jobs = jobsFor(prompt);
  if (jobs.length === 0) throw new Error(`no provider job for ${prompt}`);
  for (const job of jobs) job.plan = { polls: 0, outcome: 'succeed', outputs: ['clip.mp4'] };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-folder-lock-'));
  fake = await startAcmeFake();
  fake.files.set('clip.mp4', { body: (await sampleMedia()).mp4 });
  fake.plan = { ...PENDING, outputs: [] };
  const created = await runServiceCli(['keys', 'create', '--user', 'lee', '--tier', 'enterprise', '--data', dir]);
  key = created.stdout.trim();
});

afterAll(async () => {
  for (const child of children) {
    child.kill('SIGKILL');
    await exited(child);
  }
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(onPostgres)('one service per SQLite data folder', () => {
  it('a second serve exits non-zero naming the first; the first one generates once and succeeds', async () => {
    const first = await serveAcme();
    const c = clientFor(first.url, key);
    const id = await accepted(c, 'a heron at dusk');
    // The provider has the job: the generation is running when the second process starts.
    while (!jobsFor('a heron at dusk').some((j) => j.polls > 0)) await new Promise((r) => setTimeout(r, 20));

    const second = await secondServe();
    expect(second).not.toBe('listening');
    if (second === 'listening') return;
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toContain(first.url);
    expect(second.stderr).toContain(`the data folder ${dir} is already served by`);

    // Beside it: `keys` writes (WAL, busy timeout); `migrate` refuses with the same message.
    const more = await runServiceCli(['keys', 'create', '--user', 'max', '--data', dir]);
    expect(more.code).toBe(0);
    expect((await clientFor(first.url, more.stdout.trim()).call('GET', '/usage')).status).toBe(200);
    const migrate = await runServiceCli(['migrate', '--data', dir]);
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain(`pid ${first.child.pid}`);
    // `import` too: a bundle of another folder is refused into this one while it is served.
    const other = join(dir, 'other-service');
    expect((await runServiceCli(['keys', 'create', '--user', 'ola', '--data', other])).code).toBe(0);
    expect((await runServiceCli(['export', '--data', other, '--out', join(dir, 'bundle')])).code).toBe(0);
    const imported = await runServiceCli(['import', '--from', join(dir, 'bundle'), '--data', dir]);
    expect(imported.code).not.toBe(0);
    expect(imported.stderr).toContain(`the data folder ${dir} is already served by`);

    finishJob('a heron at dusk');
    const done = await final(c, id);
    expect(done.status).toBe('succeeded');
    expect(fake.submissions()).toBe(1);
    first.child.kill('SIGTERM');
    await exited(first.child);
  });

  it('after a kill -9 of the owner a new service takes the folder over at once and resumes its generation', async () => {
    const first = await serveAcme();
    const before = fake.submissions();
    const id = await accepted(clientFor(first.url, key), 'a fox in snow');
    // Polled: the service has recorded its provider job, which a restart must poll, never submit again.
    while (!jobsFor('a fox in snow').some((j) => j.polls > 0)) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    await exited(first.child);

    const again = await serveAcme();
    const c = clientFor(again.url, key);
    finishJob('a fox in snow');
    const done = await final(c, id);
    expect(done.status).toBe('succeeded');
    // Resumed from its recorded provider job: polled, never submitted again.
    expect(fake.submissions()).toBe(before + 1);
    again.child.kill('SIGTERM');
    await exited(again.child);
  });
});
