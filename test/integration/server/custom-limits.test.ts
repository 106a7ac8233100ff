import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIERS } from '../../../shared/api/index.ts';
import { processEnv, startTestService } from './helpers.ts';
import type { TestClient, TestService } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/clipdesk-service.js');

/** Runs `clipdesk-service` with the project's Node against the running service's data folder. */
async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = await processEnv(t.dataDir);
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args, '--data', t.dataDir], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

let t: TestService;
let c: TestClient;
beforeAll(async () => {
  t = await startTestService();
  c = await t.client('acme', 'enterprise');
});
afterAll(async () => {
  await t.stop();
});

describe('clipdesk-service users set-limits (Enterprise "custom")', () => {
  it('sets the account’s limits; /usage reports them while the service runs', async () => {
    const before = (await c.call('GET', '/usage')).body.result;
    expect(before.limits.rate).toEqual(TIERS.enterprise.rate);
    const res = await cli([
      'users',
      'set-limits',
      'acme',
      '--rpm',
      '4',
      '--rph',
      '40',
      '--images',
      '1',
      '--videos',
      '3',
      '--storage',
      '5000000',
      '--retention',
      '2',
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('acme (enterprise tier)');
    // Named limits are replaced, the others kept.
    expect((await cli(['users', 'set-limits', 'acme', '--rpd', '400'])).code).toBe(0);

    t.clock.advance(60_000);
    const usage = await c.call('GET', '/usage');
    expect(usage.status).toBe(200);
    expect(usage.body.result.tier).toBe('enterprise');
    expect(usage.body.result.limits).toMatchObject({
      rate: { minute: 4, hour: 40, day: 400 },
      concurrency: { image: 1, video: 3 },
      storageBytes: 5_000_000,
      retentionDays: 2,
      retentionSeconds: 2 * 86_400,
    });
    // Reading the usage is not counted (docs/api.md): its limits are in its body, not its headers.
    expect(usage.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('the rate limiter uses them', async () => {
    t.clock.advance(60_000);
    for (let i = 0; i < 4; i++) expect((await c.call('GET', '/models')).status).toBe(200);
    const refused = await c.call('GET', '/models');
    expect(refused.status).toBe(429);
    expect(refused.body.message).toContain('4 requests per minute');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('4');
  });

  it('concurrency and retention use them', async () => {
    t.clock.advance(60_000);
    const first = c.call('POST', '/images/generations', { model: 'clipdesk/still', size: '256x256', prompt: 'one' });
    for (let i = 0; i < 500 && t.service.stats.running('acme', 'image') === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(t.service.stats.running('acme', 'image')).toBe(1);
    const second = await c.call('POST', '/images/generations', {
      model: 'clipdesk/still',
      size: '256x256',
      prompt: 'two',
    });
    expect(second.status).toBe(429);
    expect(second.body.message).toContain('limited to 1');
    const done = await first;
    expect(done.status).toBe(200);
    const item = done.body.data[0] as { expiresAt: string; createdAt?: string };
    expect(Date.parse(item.expiresAt) - t.clock.now()).toBe(2 * 86_400_000);
    expect(t.service.stats.maxConcurrent('acme', 'image')).toBe(1);
  });

  it.each([
    [['--rpm', '0'], /--rpm must be a positive whole number/],
    [['--images', '-1'], /--images must be a positive whole number|--images/],
    [['--storage', '1.5'], /--storage must be a positive whole number/],
    [['--retention', 'ten'], /--retention must be a positive whole number/],
    [[], /needs at least one of --rpm/],
    [['--rpm'], /--rpm/],
    [['--burst', '3'], /burst/],
  ])('refuses %j with exit 2', async (flags, message) => {
    const res = await cli(['users', 'set-limits', 'acme', ...flags]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });

  it('an unknown user is an error, not a new account', async () => {
    const res = await cli(['users', 'set-limits', 'nobody-here', '--rpm', '5']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no user nobody-here');
  });
});
