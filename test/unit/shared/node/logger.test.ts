import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logFilePath } from '../../../../shared/node/log-path.ts';
import { createFileLogger, createLogger, scrubSecrets } from '../../../../shared/node/logger.ts';

const KEY = `cdsk_0123456789abcdef_${'Ab-_9'.repeat(8)}xyz`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-log-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('scrubSecrets', () => {
  it('replaces our keys and bearer tokens anywhere in a line', () => {
    const line = scrubSecrets(`{"msg":"failed with ${KEY} (Authorization: Bearer sk-live.123)","url":"/x?k=${KEY}"}`);
    expect(line).not.toContain(KEY.slice(5));
    expect(line).not.toContain('sk-live.123');
    expect(line).toContain('Bearer [redacted]');
  });
});

describe('createLogger', () => {
  it('censors secret fields and scrubs keys from messages and errors', () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => lines.push(l) });
    log.info({ req: { headers: { authorization: 'Basic dXNlcjpwYXNz' } }, key: 'plain-secret' }, 'request');
    log.error({ err: new Error(`bad key ${KEY}`) }, `rejected ${KEY}`);
    log.warn({ profile: { apiKey: 'remote-key-1234' } }, 'saved');
    const text = lines.join('');
    for (const secret of [KEY, 'dXNlcjpwYXNz', 'plain-secret', 'remote-key-1234']) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    expect(lines).toHaveLength(3);
  });
});

describe('createFileLogger', () => {
  it('writes JSON lines to logFilePath, which links to the current rotated file', async () => {
    const file = createFileLogger({ dataDir: dir, program: 'service' });
    expect(file.path).toBe(logFilePath(dir, 'service'));
    file.logger.info('before the file is open');
    await new Promise((r) => setTimeout(r, 50));
    file.logger.warn({ n: 2 }, 'after');
    await file.close();
    expect(lstatSync(file.path).isSymbolicLink()).toBe(true);
    const records = readFileSync(file.path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; level: number });
    expect(records.map((r) => r.msg)).toEqual(['before the file is open', 'after']);
  });

  it('rotates past its size and keeps a bounded number of files', async () => {
    const file = createFileLogger({ dataDir: dir, program: 'cli', size: '1k', keep: 2 });
    for (let i = 0; i < 60; i++) {
      file.logger.info({ i, pad: 'x'.repeat(100) }, 'line');
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 100));
    await file.close();
    const rotated = readdirSync(join(dir, 'logs')).filter((n) => /^cli\.\d+\.log$/.test(n));
    expect(rotated.length).toBeGreaterThan(1);
    expect(rotated.length).toBeLessThanOrEqual(3);
    const newest = rotated.sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1])).at(-1);
    expect(readlinkSync(file.path)).toBe(newest);
  });
});
