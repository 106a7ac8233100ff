import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilTrue } from '../../support/until.ts';
import { onPostgres, startTestService } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');
const KEY_VARS = [
  'FAL_KEY',
  'REPLICATE_API_TOKEN',
  'GEMINI_API_KEY',
  'RUNWAYML_API_SECRET',
  'LUMAAI_API_KEY',
  'OPENAI_API_KEY',
];

const FAL_KEY = 'fal-cli-test-key-7Hq2';
const REPLICATE_TOKEN = 'r8_cli-test-token-Zk91';

/** Runs the real CLI with the project's Node, feeding `stdin` (closed at once when absent). */
function cli(
  args: string[],
  opts: { stdin?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const v of KEY_VARS) delete env[v];
  Object.assign(env, opts.env);
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-providers-cli-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

// The PostgreSQL pass (helpers.ts, TEST_DATABASE) skips this file: the providers commands keep their keys in the data directory, whatever the database.
describe.skipIf(onPostgres)('clipdesk-service providers', () => {
  it('is in the help', async () => {
    const res = await cli(['--help']);
    expect(res.stdout).toContain('providers set-key NAME');
    expect(res.stdout).toContain('providers list');
    expect(res.stdout).toContain('providers remove-key NAME');
  });

  it('set-key reads the key from standard input and stores it owner-only', async () => {
    const res = await cli(['providers', 'set-key', 'fal', '--data', dataDir], { stdin: `${FAL_KEY}\n` });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('…7Hq2');
    expect(res.stdout + res.stderr).not.toContain(FAL_KEY);
    const file = join(dataDir, 'provider-keys.json');
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ version: 1, keys: { fal: FAL_KEY } });
  });

  it('list shows every provider, the last 4 characters only, and where each key comes from', async () => {
    const res = await cli(['providers', 'list', '--data', dataDir], { env: { REPLICATE_API_TOKEN: REPLICATE_TOKEN } });
    expect(res.code, res.stderr).toBe(0);
    const line = (id: string) => res.stdout.split('\n').find((l) => l.startsWith(`${id}\t`)) ?? '';
    expect(line('fal')).toMatch(/configured\t…7Hq2\tfrom the key file/);
    expect(line('replicate')).toMatch(/configured\t…Zk91\tfrom REPLICATE_API_TOKEN/);
    for (const id of ['google', 'runway', 'luma', 'openai']) expect(line(id)).toContain('not configured');
    expect(line('local-swift')).toContain('procedural');
    for (const secret of [FAL_KEY, REPLICATE_TOKEN]) expect(res.stdout + res.stderr).not.toContain(secret);
    const json = await cli(['providers', 'list', '--json', '--data', dataDir]);
    const rows = (JSON.parse(json.stdout) as { remote: Array<{ id: string; last4?: string; source?: string }> }).remote;
    expect(rows.find((r) => r.id === 'fal')).toMatchObject({ last4: '7Hq2', source: 'file' });
    expect(json.stdout).not.toContain(FAL_KEY);
  });

  it('refuses an empty input, a key with whitespace, and a key on the command line', async () => {
    const empty = await cli(['providers', 'set-key', 'openai', '--data', dataDir], { stdin: '' });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('no key on standard input');
    const spaced = await cli(['providers', 'set-key', 'openai', '--data', dataDir], { stdin: 'sk-part one\n' });
    expect(spaced.code).toBe(1);
    expect(spaced.stderr).toContain('contains whitespace or a line break');
    expect(spaced.stderr).not.toContain('sk-part one');
    const argv = await cli(['providers', 'set-key', 'openai', 'sk-on-argv-0001', '--data', dataDir]);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toContain('providers set-key takes one NAME');
    const unknown = await cli(['providers', 'set-key', 'sora', '--data', dataDir], { stdin: 'x-key-0001' });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown provider 'sora'");
    const stored = JSON.parse(await readFile(join(dataDir, 'provider-keys.json'), 'utf8')) as { keys: object };
    expect(Object.keys(stored.keys)).toEqual(['fal']);
  });

  it('remove-key removes the stored key', async () => {
    const res = await cli(['providers', 'remove-key', 'fal', '--data', dataDir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('removed the stored fal key');
    const list = await cli(['providers', 'list', '--data', dataDir]);
    expect(list.stdout.split('\n').find((l) => l.startsWith('fal\t'))).toContain('not configured');
  });
});

describe.skipIf(onPostgres)('a running service follows the key file', () => {
  it('set-key and remove-key take effect without a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-providers-live-'));
    const t = await startTestService({ dataDir: dir, nodes: 1, providerEnv: {}, keyFileCheckMs: 20 });
    try {
      const c = await t.client('live-keys');
      const falConfigured = async () => {
        const res = await c.call('GET', '/providers?limit=50');
        const providers = res.body.result.providers as Array<{ id: string; configured: boolean }>;
        return providers.find((p) => p.id === 'fal')?.configured;
      };
      expect(await falConfigured()).toBe(false);
      const set = await cli(['providers', 'set-key', 'fal', '--data', dir], { stdin: `${FAL_KEY}\n` });
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('A running service on this data directory uses it within seconds');
      await untilTrue('the running service to use the new key', async () => (await falConfigured()) === true, 10_000);
      expect((await cli(['providers', 'remove-key', 'fal', '--data', dir])).code).toBe(0);
      await untilTrue('the running service to drop the key', async () => (await falConfigured()) === false, 10_000);
    } finally {
      await t.stop();
    }
  });
});
