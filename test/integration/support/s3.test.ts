import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3 } from '../../support/s3.ts';

const SUPPORT = fileURLToPath(new URL('../../support/s3.ts', import.meta.url));

/** Polls until `done()` holds (a process winding down), failing after `ms`. */
async function until(done: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function answers(endpoint: string): Promise<boolean> {
  return fetch(endpoint).then(
    () => true,
    () => false,
  );
}

/** A process that starts a server, prints `DIR ENDPOINT`, then ends as `how` says. */
function startInChild(how: 'exit' | 'sigkill'): Promise<{ dir: string; endpoint: string }> {
  const script = `
    const { startS3 } = await import(${JSON.stringify(SUPPORT)});
    const s3 = await startS3();
    process.stdout.write(s3.dir + ' ' + s3.endpoint + '\\n');
    ${how === 'exit' ? 'process.exit(0);' : "process.kill(process.pid, 'SIGKILL');"}
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', () => {
      const [dir, endpoint] = out.trim().split(' ');
      if (dir && endpoint) resolve({ dir, endpoint });
      else reject(new Error(`child printed nothing: ${err}`));
    });
  });
}

describe('an S3-compatible server for tests (test/support/s3.ts)', () => {
  it('serves a bucket on loopback with SigV4 clients, and leaves nothing once stopped', async () => {
    const s3 = await startS3({ bucket: 'harness' });
    const client = s3.client();
    try {
      expect(s3.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await client.send(new HeadBucketCommand({ Bucket: 'harness' }));
      await client.send(new PutObjectCommand({ Bucket: 'harness', Key: 'a/b.txt', Body: 'hello' }));
      const got = await client.send(new GetObjectCommand({ Bucket: 'harness', Key: 'a/b.txt' }));
      expect(await got.Body?.transformToString()).toBe('hello');
      expect(existsSync(s3.dir)).toBe(true);
    } finally {
      client.destroy();
      await s3.stop();
    }
    expect(existsSync(s3.dir)).toBe(false);
    expect(await answers(s3.endpoint)).toBe(false);
  });

  it('refuses bucket names S3 refuses (fewer than 3 characters)', async () => {
    await expect(startS3({ bucket: 'ab' })).rejects.toThrow(/3 characters/);
  });

  it('is stopped and removed when its process exits without stopping it', async () => {
    const { dir, endpoint } = await startInChild('exit');
    expect(existsSync(dir)).toBe(false);
    await until(async () => !(await answers(endpoint)));
  });

  it('ends by itself and removes its directory when its process is SIGKILLed', async () => {
    const { dir, endpoint } = await startInChild('sigkill');
    await until(async () => !existsSync(dir) && !(await answers(endpoint)));
  });
});
