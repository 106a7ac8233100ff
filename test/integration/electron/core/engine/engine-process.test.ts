import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startLocalEngine } from '../../../../../electron/core/engine/index.ts';
import type { LocalEngine } from '../../../../../electron/core/engine/index.ts';
import { createLogger } from '../../../../../shared/node/logger.ts';
import { memoryKeychain } from '../../../../support/memory-keychain.ts';
import { startFalPlatformFake } from '../../../../fakes/providers/fal-platform.ts';

// The Local engine runs in a process of its own (docs/architecture.md, "The Local engine's process"): these tests look at the real
// process table, not at what the code says it does.

const logLines: string[] = [];
const logger = createLogger({ write: (line) => logLines.push(line) });

/** Parent pid (field 4 of /proc/PID/stat, after the command's closing parenthesis). */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

function ffmpegPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/ffmpeg$/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] ?? '')) pids.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

const alive = (pid: number | undefined): boolean => pid !== undefined && existsSync(`/proc/${pid}`);

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function status(engine: LocalEngine, path: string, init: RequestInit = {}): Promise<number> {
  const res = await fetch(`${engine.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${engine.getKey()}`, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the Local engine in its own process', () => {
  let dir: string;
  const engines: LocalEngine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves from a child of the app, whose renders are its children, not the app’s', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-proc-'));
    const engine = await startLocalEngine({ dataDir: dir, secrets: memoryKeychain(), logger });
    engines.push(engine);
    const pid = engine.pid()!;
    expect(pid).not.toBe(process.pid);
    expect(parentOf(pid)).toBe(process.pid);

    const before = new Set(ffmpegPids());
    const seen = new Map<number, number | null>();
    let rendering = true;
    const watcher = (async () => {
      while (rendering) {
        for (const p of ffmpegPids()) if (!before.has(p) && !seen.has(p)) seen.set(p, parentOf(p));
        // A scan of /proc costs CPU that the render (at nice 19) would otherwise get: every 25 ms.
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const body = JSON.stringify({
      model: 'clipdesk/motion',
      prompt: 'a render in the engine',
      // The smallest render: any ffmpeg the engine starts shows whose child it is.
      size: '360p',
      duration: 2,
    });
    expect(await status(engine, '/videos/generations', { method: 'POST', body })).toBe(200);
    rendering = false;
    await watcher;
    // Other test files' renders run beside this one (their ffmpeg has another parent): what counts
    // is that the engine started one, and that none is the app's.
    const parents = [...seen.values()];
    expect(parents).toContain(pid);
    expect(parents).not.toContain(process.pid);
  });

  it('is restarted on the same URL after a crash, with the provider settings the app had made', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-proc-'));
    const engine = await startLocalEngine({ dataDir: dir, secrets: memoryKeychain(), logger });
    engines.push(engine);
    await engine.providers.setProviderEnabled('fal', false);
    await engine.providers.setProviderKey('fal', 'fal-key-kept-in-memory-0000');
    const first = engine.pid()!;

    process.kill(first, 'SIGKILL');
    await until(() => engine.pid() !== first && alive(engine.pid()), 'a new engine process');
    await until(async () => (await status(engine, '/models').catch(() => 0)) === 200, 'the restarted engine to answer');
    const fal = (await engine.providers.providerStatus()).find((p) => p.id === 'fal');
    expect(fal).toMatchObject({ enabled: false, configured: true });
    expect(logLines.join('')).toContain('the Local engine stopped unexpectedly; restarting it');
  });

  it('syncs its catalog when the app asks (Refresh models): the report crosses back, and GET /models lists what was read', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-proc-'));
    const platform = await startFalPlatformFake();
    try {
      const engine = await startLocalEngine({
        dataDir: dir,
        secrets: memoryKeychain(),
        logger,
        env: { CLIPDESK_FAL_PLATFORM_URL: platform.baseUrl },
        providers: { providerKeys: { fal: platform.key } },
      });
      engines.push(engine);
      const report = await engine.service.syncCatalog({ providers: ['fal'] });
      expect(report.written).toBe(true);
      const fal = report.providers.find((p) => p.provider === 'fal');
      expect(fal).toMatchObject({ ok: true });
      expect(fal!.models).toBeGreaterThan(60);
      expect(fal!.prices).toBeGreaterThan(60);
      const listed = async () => {
        const res = await fetch(`${engine.url}/models?limit=1000`, {
          headers: { authorization: `Bearer ${engine.getKey()}` },
        });
        return ((await res.json()) as { result: { models: Array<{ id: string }> } }).result.models;
      };
      await until(async () => (await listed()).length > 60, 'the engine to list the synced models');
      expect(platform.requests.every((r) => r.headers['authorization'] === `Key ${platform.key}`)).toBe(true);
    } finally {
      await platform.close();
    }
  });

  it('holds provider keys in memory only: never in its command line or environment', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-proc-'));
    const secret = 'fal-secret-never-on-the-command-line-4242';
    const engine = await startLocalEngine({
      dataDir: dir,
      secrets: memoryKeychain(),
      logger,
      providers: { providerKeys: { fal: secret } },
    });
    engines.push(engine);
    const pid = engine.pid()!;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(secret);
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain(secret);
    expect((await engine.providers.providerStatus()).find((p) => p.id === 'fal')?.configured).toBe(true);
  });

  it('stops when it is closed, and when the app dies without closing it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-engine-proc-'));
    const engine = await startLocalEngine({ dataDir: dir, secrets: memoryKeychain(), logger });
    const pid = engine.pid()!;
    await engine.close();
    expect(alive(pid)).toBe(false);

    // An app process that starts the engine, prints its pid, and is then killed with no chance to close it.
    const app = spawn(process.execPath, [join(import.meta.dirname, 'engine-app-child.ts'), join(dir, 'orphan')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: app.stdout }).once('line', resolve);
      app.once('exit', () => reject(new Error('the app child exited before its engine started')));
    });
    const orphan = Number(line);
    expect(alive(orphan)).toBe(true);
    app.kill('SIGKILL');
    await until(() => !alive(orphan), 'the orphaned engine to exit');
  });
});
