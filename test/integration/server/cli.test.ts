import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { probe } from '../../../shared/node/ffmpeg.ts';
import { startFalFake } from '../../fakes/providers/fal.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import { openDatabase } from '../../../server/storage/db.ts';
import { loadOrCreateSecret } from '../../../server/storage/secret.ts';
import { WebhookSecrets } from '../../../server/webhooks/secrets.ts';
import { SMALL_VIDEO, clientFor, listed, onPostgres } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');

/** Runs the CLI with the project's Node (the one running the tests). */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const serve = (dataDir: string, extra: string[] = []) => serveProcess(dataDir, { args: extra });

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-cli-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

// The PostgreSQL pass (helpers.ts, TEST_DATABASE) skips this file: it runs the CLI on a data directory's SQLite file.
describe.skipIf(onPostgres)('clipdesk-service CLI', () => {
  it('--help prints the usage', async () => {
    const res = await cli(['--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('clipdesk-service serve');
    expect(res.stdout).toContain('keys create --user NAME');
    expect(res.stdout).toContain('--allow-private-image-urls');
    expect(res.stdout).toContain('--allow-private-webhooks');
    expect(res.stdout).toContain('keys rotate-webhook-secret KEY_ID');
  });

  it('keys create prints the key alone, or one JSON object; list, revoke and set-tier work', async () => {
    const plain = await cli(['keys', 'create', '--user', 'carol', '--data', dataDir]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^cdsk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    expect(plain.stderr).not.toContain('ExperimentalWarning');
    // The webhook signing secret, once, labelled, on stderr (stdout stays the key alone for scripts).
    const secretLines = plain.stderr.split('\n').filter((l) => l.includes('whsec_'));
    expect(secretLines).toHaveLength(1);
    expect(secretLines[0]).toMatch(/^webhook signing secret \(shown once[^)]*\): whsec_[A-Za-z0-9+/]{43}=$/);
    // Made without --name: a name that tells it apart (which key, which day), printed on stderr.
    const day = new Date().toISOString().slice(0, 10);
    expect(plain.stderr).toContain(`named the key 'key 1 (${day})' (choose a name with --name LABEL)`);
    const json = await cli([
      'keys',
      'create',
      '--user',
      'carol',
      '--tier',
      'basic',
      '--name',
      'laptop',
      '--permissions',
      'read,generate',
      '--data',
      dataDir,
      '--json',
    ]);
    const created = JSON.parse(json.stdout) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(['id', 'key', 'name', 'tier', 'user', 'webhookSecret']);
    expect(created).toMatchObject({ user: 'carol', tier: 'basic', name: 'laptop' });
    expect(json.stderr).not.toContain('named the key');
    expect(created['webhookSecret']).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(json.stderr).not.toContain('whsec_');
    const listed = await cli(['keys', 'list', '--user', 'carol', '--data', dataDir]);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
    expect(listed.stdout).not.toContain(created['key']);
    expect(listed.stdout + listed.stderr).not.toContain('whsec_');
    expect((await cli(['keys', 'list', '--user', 'carol', '--data', dataDir, '--json'])).stdout).not.toContain(
      'whsec_',
    );
    expect(listed.stdout).toContain('laptop');
    expect(listed.stdout).toContain(`key 1 (${day})`);
    expect(listed.stdout).not.toContain('\tdefault\t');
    expect((await cli(['keys', 'revoke', created['id']!, '--data', dataDir])).code).toBe(0);
    expect((await cli(['keys', 'list', '--user', 'carol', '--data', dataDir])).stdout).toContain('revoked');
    expect((await cli(['users', 'set-tier', 'carol', 'pro', '--data', dataDir])).code).toBe(0);
    expect((await cli(['users', 'set-tier', 'carol', 'platinum', '--data', dataDir])).code).toBe(2);
    expect((await cli(['keys', 'revoke', 'key_0000000000000000', '--data', dataDir])).code).toBe(1);
    expect((await cli(['keys', 'create', '--data', dataDir])).code).toBe(2);
  });

  it('keys rotate-webhook-secret prints a new signing secret once; the service signs with it', async () => {
    const made = JSON.parse(
      (await cli(['keys', 'create', '--user', 'gus', '--tier', 'pro', '--data', dataDir, '--json'])).stdout,
    ) as Record<string, string>;
    const rotated = await cli(['keys', 'rotate-webhook-secret', made['id']!, '--data', dataDir]);
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
    expect(rotated.stdout.trim()).not.toBe(made['webhookSecret']);
    const asJson = await cli(['keys', 'rotate-webhook-secret', made['id']!, '--data', dataDir, '--json']);
    const secret = (JSON.parse(asJson.stdout) as { id: string; webhookSecret: string }).webhookSecret;
    expect(JSON.parse(asJson.stdout)).toEqual({ id: made['id'], webhookSecret: secret });
    // The service (another process, same data directory) opens the sealed secret and signs with it.
    const db = openDatabase(dataDir);
    try {
      const secrets = new WebhookSecrets(db, await loadOrCreateSecret(dataDir));
      // The new secret signs first; the one it replaced signs beside it for a day.
      expect(await secrets.forSigning(made['id']!, Date.now())).toEqual([secret, expect.any(String)]);
    } finally {
      await db.close();
    }
    const missing = await cli(['keys', 'rotate-webhook-secret', 'key_0000000000000000', '--data', dataDir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no key key_0000000000000000');
    expect((await cli(['keys', 'rotate-webhook-secret', '--data', dataDir])).code).toBe(2);
  });

  it('serve takes --allow-private-webhooks (an unknown flag would exit 2 before listening)', async () => {
    expect((await cli(['serve', '--port', '0', '--data', dataDir, '--allow-private-webhook'])).code).toBe(2);
    const served = await serve(dataDir, ['--allow-private-webhooks']);
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    served.child.kill('SIGTERM');
    await exited(served.child);
  });

  it('--provider-timeout cancels a provider job that runs too long at the provider, and refuses nonsense', async () => {
    expect((await cli(['serve', '--port', '0', '--data', dataDir, '--provider-timeout', '0'])).code).toBe(2);
    expect((await cli(['serve', '--port', '0', '--data', dataDir, '--provider-timeout', 'soon'])).code).toBe(2);
    const fal = await startFalFake({ scenario: 'slow' });
    // The key and base URL come from the environment, as an operator's would.
    const env: NodeJS.ProcessEnv = { ...process.env, FAL_KEY: fal.key, CLIPDESK_FAL_BASE_URL: fal.baseUrl };
    for (const name of [
      'REPLICATE_API_TOKEN',
      'GEMINI_API_KEY',
      'RUNWAYML_API_SECRET',
      'LUMAAI_API_KEY',
      'OPENAI_API_KEY',
    ])
      delete env[name];
    const served = await serveProcess(dataDir, { args: ['--provider-timeout', '1'], env });
    try {
      const made = await cli(['keys', 'create', '--user', 'slow', '--tier', 'pro', '--data', dataDir]);
      const c = clientFor(served.url, made.stdout.trim());
      const res = await c.call('POST', '/videos/generations', {
        model: 'kling/v2.1',
        prompt: 'a glacier calving, very slowly',
        provider: 'fal',
        duration: 5,
      });
      expect(res.status).toBe(503);
      expect(res.body.error.message).toMatch(/did not finish within 1 s/);
      // Canceled at the provider, so it stops running (and charging) there.
      expect(fal.requests.some((r) => r.method === 'PUT' && r.path.endsWith('/cancel'))).toBe(true);
      expect(fal.submissions()).toBe(1);
    } finally {
      served.child.kill('SIGTERM');
      await exited(served.child);
      await fal.close();
    }
  });

  it('--file-url-ttl sets how long private file URLs work, and refuses nonsense', async () => {
    expect((await cli(['serve', '--port', '0', '--data', dataDir, '--file-url-ttl', '0'])).code).toBe(2);
    expect((await cli(['serve', '--port', '0', '--data', dataDir, '--file-url-ttl', 'day'])).code).toBe(2);
    const served = await serve(dataDir, ['--file-url-ttl', '120']);
    try {
      const made = await cli(['keys', 'create', '--user', 'ttl', '--tier', 'pro', '--data', dataDir]);
      const c = clientFor(served.url, made.stdout.trim());
      const res = await c.call('POST', '/images/generations', {
        model: 'clipdesk/still',
        prompt: 'a short-lived link',
        size: '256x256',
        public: false,
      });
      expect(res.status).toBe(200);
      const item = res.body.data[0] as { createdAt: string; urlExpiresAt: string };
      const lifetime = (Date.parse(item.urlExpiresAt) - Date.parse(item.createdAt)) / 1000;
      expect(lifetime).toBeGreaterThanOrEqual(120);
      expect(lifetime).toBeLessThanOrEqual(130);
    } finally {
      served.child.kill('SIGTERM');
      await exited(served.child);
    }
  });

  it('refuses a non-loopback host without --allow-remote', async () => {
    const res = await cli(['serve', '--host', '0.0.0.0', '--port', '0', '--data', dataDir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/allow-remote/);
  });

  it('serve refuses --listen-database beside SQLite, exit 2, without echoing its password', async () => {
    const res = await cli([
      'serve',
      '--port',
      '0',
      '--data',
      dataDir,
      '--listen-database',
      'postgres://app:hunter2@db.internal:5432/clipdesk',
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--listen-database is for a PostgreSQL database/);
    expect(res.stderr).not.toContain('hunter2');
  });

  it('serve prints exactly one line when ready, and keys made by the CLI work against it', async () => {
    const served = await serve(dataDir);
    try {
      const made = await cli(['keys', 'create', '--user', 'dave', '--tier', 'pro', '--data', dataDir]);
      const res = await clientFor(served.url, made.stdout.trim()).call('GET', '/models');
      expect(res.status).toBe(200);
      expect(served.stdout().split('\n').filter(Boolean)).toHaveLength(1);
    } finally {
      served.child.kill('SIGTERM');
      await exited(served.child);
    }
    expect(served.child.exitCode).toBe(0);
  });
});

describe.skipIf(onPostgres)('serve --allow-private-image-urls', () => {
  it('lets image_url reach a loopback host, which is refused without it', async () => {
    // The image host answers 404: which error comes back shows whether the address was allowed.
    const host = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const imageUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}/start.png`;
    try {
      const key = (await cli(['keys', 'create', '--user', 'frank', '--data', dataDir])).stdout.trim();
      for (const [flags, message] of [
        [[], /must be a public address/],
        [['--allow-private-image-urls'], /not reachable \(HTTP 404\)/],
      ] as const) {
        const served = await serve(dataDir, [...flags]);
        try {
          const res = await clientFor(served.url, key).call('POST', '/videos/generations', {
            ...SMALL_VIDEO,
            prompt: 'x',
            image_url: imageUrl,
          });
          expect(res.status).toBe(400);
          expect(res.body.message).toMatch(message);
        } finally {
          served.child.kill('SIGTERM');
          await exited(served.child);
        }
      }
    } finally {
      await new Promise((r) => host.close(r));
    }
  });
});

describe.skipIf(onPostgres)('SIGKILL mid-generation', () => {
  it('loses no completed item and leaves no half-written file visible', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-kill-'));
    try {
      const key = (await cli(['keys', 'create', '--user', 'erin', '--tier', 'pro', '--data', dir])).stdout.trim();
      let served = await serve(dir);
      let c = clientFor(served.url, key);
      const done = await c.call('POST', '/videos/generations', { ...SMALL_VIDEO, prompt: 'finished before the crash' });
      expect(done.status).toBe(200);

      // Start two more and kill the server while they are in flight.
      const inflight = [1, 2].map((i) =>
        fetch(`${served.url}/videos/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ ...SMALL_VIDEO, prompt: `interrupted ${i}` }),
        }).catch(() => null),
      );
      for (let i = 0; i < 500; i++) {
        const work = await readdir(join(dir, 'tmp')).catch(() => []);
        if (work.some((w) => w.startsWith('gen-'))) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      served.child.kill('SIGKILL');
      await exited(served.child);
      await Promise.all(inflight);

      served = await serve(dir);
      c = clientFor(served.url, key);
      try {
        const list = await c.call('GET', '/media?user=me&limit=100');
        const ids = listed(list.body).map((m) => m.id);
        expect(ids).toContain(done.body.data[0].id);
        // Every listed item is whole; every item directory on disk is a listed item; no work files remain.
        for (const m of listed(list.body)) {
          for (const f of m.formats) {
            const res = await fetch(f.url);
            expect(res.status).toBe(200);
            const path = join(dir, `check-${m.id}-${f.mime.replace('/', '-')}`);
            await writeFile(path, Buffer.from(await res.arrayBuffer()));
            expect((await probe(path)).durationSeconds).toBeGreaterThan(1.5);
          }
        }
        expect((await readdir(join(dir, 'media'))).sort()).toEqual([...ids].sort());
        expect(await readdir(join(dir, 'tmp'))).toEqual([]);
      } finally {
        served.child.kill('SIGTERM');
        await exited(served.child);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
