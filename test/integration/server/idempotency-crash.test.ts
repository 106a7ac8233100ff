import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { exited, serveProcess } from '../../support/service-process.ts';
import { TEST_STORAGE, clientFor, onPostgres, processEnv, storedKeysOf } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');

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

/** A standalone service; `crashAt` arms the CLIPDESK_TEST_CRASH_AT hook (server/generation/finish.ts). */
async function serve(dataDir: string, crashAt?: string) {
  const env = { ...process.env };
  if (crashAt) env['CLIPDESK_TEST_CRASH_AT'] = crashAt;
  else delete env['CLIPDESK_TEST_CRASH_AT'];
  return serveProcess(dataDir, { env: await processEnv(dataDir, env) });
}

const REQUEST = { model: 'clipdesk/still', prompt: 'a kite over the dunes', size: '64x64', n: 2 };

describe('an Idempotency-Key survives a SIGKILL at any step of a generation', () => {
  it.each(['rendered', 'placed', 'committed'])(
    'killed at "%s": the repeat answers once, with two items charged once',
    async (step) => {
      const dir = await mkdtemp(join(tmpdir(), `clipdesk-idem-${step}-`));
      try {
        const key = (await run(['keys', 'create', '--user', 'kim', '--tier', 'pro', '--data', dir], dir)).trim();
        const first = await serve(dir, step);
        const died = exited(first.child);
        const lost = await clientFor(first.url, key)
          .call('POST', '/images/generations', REQUEST, { 'idempotency-key': `K-${step}` })
          .then(
            (r) => r.status,
            () => 'no answer',
          );
        expect(lost).toBe('no answer');
        expect(await died).toBe('SIGKILL');

        const again = await serve(dir);
        try {
          const c = clientFor(again.url, key);
          const repeat = await c.call('POST', '/images/generations', REQUEST, { 'idempotency-key': `K-${step}` });
          expect(repeat.status).toBe(200);
          // Committed before the kill: the repeat is the first answer. Otherwise, on SQLite nothing was
          // kept and it runs afresh; on PostgreSQL the request was a row and a queue job, which the
          // new node takes over once its lease lapses, and the repeat follows it to its one result.
          expect(repeat.headers.get('idempotent-replayed')).toBe(step === 'committed' || onPostgres ? 'true' : null);
          const ids = (repeat.body.data as Array<{ id: string }>).map((i) => i.id);
          expect(ids).toHaveLength(2);
          const third = await c.call('POST', '/images/generations', REQUEST, { 'idempotency-key': `K-${step}` });
          expect((third.body.data as Array<{ id: string }>).map((i) => i.id)).toEqual(ids);

          const list = await c.call('GET', '/media?user=me&limit=100');
          expect(list.body.result.total).toBe(2);
          const usage = await c.call('GET', '/usage');
          expect(usage.body.result.usage.cost.total).toBeCloseTo(repeat.body.price as number, 6);
          // Files the kill left without a row: serve removes them at start on SQLite and disk; in a
          // bucket, or on PostgreSQL (whose nodes may share the files), fsck does.
          if (onPostgres || TEST_STORAGE === 's3')
            await run(['fsck', '--repair', '--min-age', '0', '--data', dir], dir);
          const stored = new Set((await storedKeysOf(dir, 'media/')).map((key) => key.split('/')[1]));
          expect([...stored].sort()).toEqual([...ids].sort());
        } finally {
          again.child.kill('SIGTERM');
          await exited(again.child);
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
