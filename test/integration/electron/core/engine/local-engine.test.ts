import { afterEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE_KEY_FILE, startLocalEngine } from '../../../../../electron/core/engine/index.ts';
import type { LocalEngine } from '../../../../../electron/core/engine/index.ts';
import type { SecretStore } from '../../../../../electron/core/secrets/index.ts';
import { createLogger } from '../../../../../shared/node/logger.ts';

const logLines: string[] = [];
const logger = createLogger({ write: (line) => logLines.push(line) });

// The real embedded service; the secret stores here stand in for keychains in states the tests
// cannot put a real one in on demand (a collection locked behind a dismissed unlock prompt).
function memoryKeychain(failSet = false): SecretStore & { values: Map<string, string> } {
  const values = new Map<string, string>();
  return {
    values,
    status: () => Promise.resolve({ backend: 'secret-service', available: true, message: 'test keychain' }),
    get: (account) => Promise.resolve(values.get(account) ?? null),
    set: (account, secret) => {
      if (failSet) return Promise.reject(new Error("Couldn't access platform storage: unlock prompt was dismissed"));
      values.set(account, secret);
      return Promise.resolve();
    },
    delete: (account) => Promise.resolve(values.delete(account)),
    info: (account) =>
      Promise.resolve({
        hasKey: values.has(account),
        last4: values.get(account)?.slice(-4) ?? null,
        backend: 'secret-service',
      }),
  };
}

async function models(engine: LocalEngine): Promise<number> {
  const res = await fetch(`${engine.url}/models`, { headers: { authorization: `Bearer ${engine.getKey()}` } });
  return res.status;
}

describe('the embedded Local engine', () => {
  let dir: string;
  const engines: LocalEngine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps its key in the keychain and reuses it on the next start', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-'));
    const keychain = memoryKeychain();
    const first = await startLocalEngine({ dataDir: dir, secrets: keychain, logger });
    engines.push(first);
    expect(first.keyStorage).toBe('keychain');
    // One "pid" per line, the logging process's; the engine's own process is enginePid.
    for (const line of logLines) expect(line.match(/"pid":/g)).toHaveLength(1);
    expect(logLines.find((l) => l.includes('Local engine started'))).toMatch(/"enginePid":\d+/);
    expect(await models(first)).toBe(200);
    const key = first.getKey();
    await engines.pop()!.close();

    const second = await startLocalEngine({ dataDir: dir, secrets: keychain, logger });
    engines.push(second);
    expect(second.getKey()).toBe(key);
    expect(keychain.values.size).toBe(1);
  });

  it('keeps its key in the engine data folder (0600) when the keychain refuses it, and reuses it on the next start', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-'));
    const first = await startLocalEngine({ dataDir: dir, secrets: memoryKeychain(true), logger });
    engines.push(first);
    expect(first.keyStorage).toBe('file');
    expect(await models(first)).toBe(200);
    // The key the keychain did not take was revoked, not left valid with no one holding it.
    const keys = await first.service.listKeys(first.user);
    expect(keys.filter((k) => k.revokedAt === null)).toHaveLength(1);
    expect(keys.find((k) => k.name === 'Clipdesk app')?.revokedAt).not.toBeNull();
    // …and said so in the log, instead of hiding it; the key itself is never logged.
    expect(logLines.join('')).toContain('keychain cannot hold the Local engine key');
    expect(logLines.join('')).toContain('unlock prompt was dismissed');
    expect(logLines.join('')).not.toContain(first.getKey());
    const file = join(dir, ENGINE_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const key = first.getKey();
    await engines.pop()!.close();

    const second = await startLocalEngine({ dataDir: dir, secrets: memoryKeychain(true), logger });
    engines.push(second);
    expect(second.getKey()).toBe(key);
    expect(await models(second)).toBe(200);
  });

  it('still starts when neither the keychain nor the key file can keep its key, on a key for this run only', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-'));
    // A folder where the key file would go: it cannot be written.
    await mkdir(join(dir, ENGINE_KEY_FILE));
    const engine = await startLocalEngine({ dataDir: dir, secrets: memoryKeychain(true), logger });
    engines.push(engine);
    expect(engine.keyStorage).toBe('ephemeral');
    expect(await models(engine)).toBe(200);
    const live = (await engine.service.listKeys(engine.user)).filter((k) => k.revokedAt === null);
    expect(live).toHaveLength(1);
    expect(live[0]?.name).toBe('Clipdesk (this run)');
  });
});
