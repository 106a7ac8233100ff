import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalEngine } from '../../../../../electron/core/engine/index.ts';
import type { SecretStore } from '../../../../../electron/core/secrets/index.ts';
import { logFilePath } from '../../../../../shared/node/log-path.ts';
import { createFileLogger } from '../../../../../shared/node/logger.ts';

/** A keychain backend that refuses the key with an error that repeats it (some do): the key reaches the logger. */
function echoingKeychain(refused: string[]): SecretStore {
  return {
    status: () => Promise.resolve({ backend: 'secret-service', available: true, message: 'test keychain' }),
    get: () => Promise.resolve(null),
    set: (_account, secret) => {
      refused.push(secret);
      return Promise.reject(new Error(`backend refused to store "${secret}"`));
    },
    delete: () => Promise.resolve(false),
    info: () => Promise.resolve({ hasKey: false, last4: null, backend: 'secret-service' }),
  };
}

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-logging-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('the log of a real flow with keys', () => {
  it('holds what happened and never a key', async () => {
    const log = createFileLogger({ dataDir, program: 'app' });
    const refused: string[] = [];
    const engine = await startLocalEngine({
      dataDir: join(dataDir, 'engine'),
      secrets: echoingKeychain(refused),
      logger: log.logger.child({ component: 'engine' }),
    });
    const key = engine.getKey();
    const created = await engine.service.createKey({ user: 'second', tier: 'pro' });
    const call = (k: string, path: string, body?: unknown) =>
      fetch(`${engine.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${k}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    expect((await call(key, '/models')).status).toBe(200);
    const generated = await call(created.key, '/images/generations', { model: 'clipdesk/still', prompt: 'a red kite' });
    expect(generated.status).toBe(200);
    const wrong = `${created.key.slice(0, 22)}${'x'.repeat(43)}`;
    expect((await call(wrong, '/models')).status).toBe(401);
    expect((await call(key, `/media?search=${encodeURIComponent(created.key)}`)).status).toBeLessThan(500);
    await engine.close();
    await log.close();

    const logs = join(dataDir, 'logs');
    const text = readdirSync(logs)
      .filter((n) => n.endsWith('.log'))
      .map((n) => readFileSync(join(logs, n), 'utf8'))
      .join('');
    expect(readFileSync(logFilePath(dataDir, 'app'), 'utf8')).toContain('Local engine started');
    // The keychain's error was logged (with the key it repeated) …
    expect(text).toMatch(/backend refused to store/);
    // … and no key, nor the secret part of one, is in any log file.
    expect(refused).toHaveLength(1);
    for (const secret of [...refused, key, created.key, wrong]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(22));
    }
  });
});
