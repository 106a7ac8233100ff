import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startAcmeFake } from '../../support/remote/fake-provider.ts';
import type { AcmeFake } from '../../support/remote/fake-provider.ts';
import { sampleMedia } from '../../support/remote/media.ts';
import { exited } from '../../support/service-process.ts';
import { TEST_STORAGE, clientFor, onPostgres, openTestDatabase, processEnv, storedKeysOf, testS3 } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
const SERVE = join(ROOT, 'test/support/remote/serve-acme.ts');

const REQUEST = {
  model: 'clipdesk/motion',
  size: '360p',
  duration: 2,
  routing: 'cheapest',
  prompt: 'a harbour at dawn',
};

interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** The service with the Acme provider (serve-acme.ts) in its own process; `crashAt` arms CLIPDESK_TEST_CRASH_AT. */
async function serve(dataDir: string, fake: AcmeFake, crashAt?: string): Promise<Served> {
  const env: NodeJS.ProcessEnv = {
    ...(await processEnv(dataDir)),
    CLIPDESK_DATA: dataDir,
    ACME_BASE_URL: fake.baseUrl,
    ACME_KEY: fake.key,
  };
  if (crashAt) env['CLIPDESK_TEST_CRASH_AT'] = crashAt;
  else delete env['CLIPDESK_TEST_CRASH_AT'];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SERVE], { cwd: ROOT, env });
    let output = '';
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(output);
      if (m) done({ child, url: m[1] ?? '', output: () => output });
    });
    child.once('exit', (code) => fail(new Error(`serve-acme exited ${code}: ${output}`)));
  });
}

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

/** Every file under `dir`, recursively. */
async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('a service killed while a remote provider works on its job', () => {
  it('resumes the job after a restart: no second submission, one charge, and the repeat gets the first result', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-remote-resume-'));
    const media = await sampleMedia();
    const fake = await startAcmeFake();
    fake.files.set('clip.mp4', { body: media.mp4 });
    // Not done until the test says so below, so the repeat arrives while the job resumes.
    fake.plan = { polls: 1_000_000, outcome: 'succeed', outputs: ['clip.mp4'], cost: 0.0042 };
    const outputs: string[] = [];
    try {
      const key = (await run(['keys', 'create', '--user', 'rey', '--tier', 'pro', '--data', dir], dir)).trim();
      const first = await serve(dir, fake, 'submitted');
      const died = exited(first.child);
      const lost = await clientFor(first.url, key)
        .call('POST', '/videos/generations', REQUEST, { 'idempotency-key': 'resume-1' })
        .then(
          (r) => r.status,
          () => 'no answer',
        );
      expect(lost).toBe('no answer');
      expect(await died).toBe('SIGKILL');
      outputs.push(first.output());
      expect(fake.submissions()).toBe(1);

      const again = await serve(dir, fake);
      try {
        const c = clientFor(again.url, key);
        const polledBefore = fake.jobs.get('job_1')?.polls ?? 0;
        const repeating = c.call('POST', '/videos/generations', REQUEST, { 'idempotency-key': 'resume-1' });
        // The resumed job is being polled, and the repeat waits for it rather than submitting.
        while ((fake.jobs.get('job_1')?.polls ?? 0) < polledBefore + 3) await new Promise((r) => setTimeout(r, 10));
        expect(fake.submissions()).toBe(1);
        const job = fake.jobs.get('job_1');
        if (job) job.plan = { ...job.plan, polls: 0 };
        const repeat = await repeating;
        expect(repeat.status).toBe(200);
        expect(repeat.headers.get('idempotent-replayed')).toBe('true');
        expect(repeat.body.stats.providerId).toBe('luma');
        expect(repeat.body.price).toBeCloseTo(0.0042, 6);
        expect(fake.submissions()).toBe(1);

        const list = await c.call('GET', '/media?user=me&limit=100');
        expect(list.body.result.total).toBe(1);
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBeCloseTo(0.0042, 6);
        const third = await c.call('POST', '/videos/generations', REQUEST, { 'idempotency-key': 'resume-1' });
        expect(third.body.data[0].id).toBe(repeat.body.data[0].id);
        expect(fake.submissions()).toBe(1);

        // The provider key is nowhere in the data directory (database, logs, media, sidecars),
        // nor in what the service printed or answered.
        const answers = JSON.stringify([repeat.body, list.body, usage.body, third.body]);
        expect(answers).not.toContain(fake.key);
        again.child.kill('SIGTERM');
        await exited(again.child);
        outputs.push(again.output());
        const written = await files(dir);
        expect(written.map((f) => f.slice(dir.length))).toEqual(
          expect.arrayContaining([
            // On PostgreSQL the rows are not a file here: they are searched below.
            ...(onPostgres ? [] : ['/service.db']),
            expect.stringMatching(/\.log$/),
            // In a bucket the media are not here either: the bucket's files are searched too.
            ...(TEST_STORAGE === 's3' ? [] : [expect.stringMatching(/video\.mp4$/)]),
          ]),
        );
        if (TEST_STORAGE === 's3') {
          expect(await storedKeysOf(dir, 'media/')).toEqual(
            expect.arrayContaining([expect.stringMatching(/video\.mp4$/)]),
          );
          const s3 = await testS3();
          written.push(...(await files(join(s3.dir, s3.bucket))));
        }
        for (const file of written) {
          expect((await readFile(file)).includes(fake.key), file).toBe(false);
        }
        if (onPostgres) {
          const db = await openTestDatabase(dir);
          try {
            const tables = await db.all<{ name: string }>(
              "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
            );
            for (const { name } of tables)
              expect(JSON.stringify(await db.all(`SELECT * FROM "${name}"`)), name).not.toContain(fake.key);
          } finally {
            await db.close();
          }
        }
        expect(outputs.join('\n')).not.toContain(fake.key);
        // On PostgreSQL the request was a queue job, which the new node took over (polling its job).
        expect(outputs.join('\n')).toMatch(onPostgres ? /resuming Acme job job_1/ : /resuming 1 provider job/);
      } finally {
        again.child.kill('SIGTERM');
        await exited(again.child);
      }
    } finally {
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a resumed job that fails at the provider charges nothing, and the repeat runs afresh', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-remote-resume-fail-'));
    const fake = await startAcmeFake();
    fake.plan = { polls: 5, outcome: 'fail', outputs: [] };
    try {
      const key = (await run(['keys', 'create', '--user', 'rey', '--tier', 'pro', '--data', dir], dir)).trim();
      const first = await serve(dir, fake, 'submitted');
      const died = exited(first.child);
      await clientFor(first.url, key)
        .call('POST', '/videos/generations', REQUEST, { 'idempotency-key': 'resume-2' })
        .catch(() => undefined);
      expect(await died).toBe('SIGKILL');
      fake.plan = { polls: 0, outcome: 'fail', outputs: [] };
      const again = await serve(dir, fake);
      try {
        const c = clientFor(again.url, key);
        const repeat = await c.call('POST', '/videos/generations', REQUEST, { 'idempotency-key': 'resume-2' });
        expect(repeat.status).toBe(200);
        // Not the resumed job's (it failed): a fresh run, which fell back to the local provider.
        expect(repeat.headers.get('idempotent-replayed')).toBeNull();
        expect(repeat.body.stats.providerSlug).toBe('swift');
        const list = await c.call('GET', '/media?user=me&limit=100');
        expect(list.body.result.total).toBe(1);
        const usage = await c.call('GET', '/usage');
        expect(usage.body.result.usage.cost.total).toBeCloseTo(repeat.body.price as number, 6);
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
