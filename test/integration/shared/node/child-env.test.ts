// Keys and the key file's passphrase stay in the process that holds them: the Local engine's
// process, ffmpeg, ffprobe and the shells that supervise them get an explicit environment
// (docs/security.md, "Keys without an OS keychain"). Read from /proc/PID/environ, which is what
// the kernel handed each process, not from what the code says it passes.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ffmpeg from 'fluent-ffmpeg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalEngine } from '../../../../electron/core/engine/index.ts';
import { ffmpegPath, ffprobePath, runFluent, runProcess } from '../../../../shared/node/ffmpeg.ts';
import { reaperPid } from '../../../../shared/node/ffmpeg/watchdog.ts';
import { createLogger } from '../../../../shared/node/logger.ts';
import { memoryKeychain } from '../../../support/memory-keychain.ts';
import { descendants, waitUntil } from '../../../support/processes.ts';

/** Set in this (the parent's) environment for the whole file: a process per file, so no other file sees them. */
const SECRETS = {
  CLIPDESK_KEY_PASSPHRASE: 'the-passphrase-never-crosses',
  CLIPDESK_API_KEY: 'cdsk_api_key_never_crosses',
  ACME_SECRET_TOKEN: 'a-fake-secret-never-crosses',
};

interface Seen {
  pid: number;
  name: string;
  env: Record<string, string>;
}

function environOf(pid: number): Record<string, string> | null {
  try {
    const env: Record<string, string> = {};
    for (const pair of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = pair.indexOf('=');
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    return env;
  } catch {
    return null; // gone while we looked
  }
}

/** Watches `root`'s descendants until stopped, reading each one's environment when first seen. */
function watchDescendants(root: number): { sofar(): Seen[]; stop(): Promise<Seen[]> } {
  const seen = new Map<number, Seen>();
  const scan = (): void => {
    for (const { pid, name } of descendants(root)) {
      const known = seen.get(pid);
      // A watchdog shell execs its binary under the same pid: read again once the name changes.
      if (known?.name === name) continue;
      const env = environOf(pid);
      if (env) seen.set(pid, { pid, name, env });
    }
  };
  let watching = true;
  const loop = (async () => {
    while (watching) {
      scan();
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    sofar: () => [...seen.values()],
    async stop() {
      watching = false;
      await loop;
      scan(); // what runs now, too
      return [...seen.values()];
    },
  };
}

function expectNoSecrets(processes: Seen[]): void {
  for (const p of processes) {
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(p.env[name], `${p.name} (${p.pid}) has ${name}`).toBeUndefined();
      expect(Object.values(p.env), `${p.name} (${p.pid})`).not.toContain(value);
    }
  }
}

const logger = createLogger({ write: () => undefined });

describe.skipIf(process.platform !== 'linux')('what a child process is given of the environment', () => {
  let dir: string;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'clipdesk-child-env-'));
    for (const [name, value] of Object.entries(SECRETS)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("the Local engine's process and every process of its render get none of the parent's secrets", async () => {
    const engine = await startLocalEngine({ dataDir: join(dir, 'engine'), secrets: memoryKeychain(), logger });
    try {
      const pid = engine.pid()!;
      const own = environOf(pid)!;
      expect(own['PATH']).toBe(process.env['PATH']);
      expectNoSecrets([{ pid, name: 'engine', env: own }]);

      const watcher = watchDescendants(pid);
      const res = await fetch(`${engine.url}/videos/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${engine.getKey()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'clipdesk/motion', prompt: 'an environment test', size: '360p', duration: 2 }),
      });
      await res.arrayBuffer();
      const seen = await watcher.stop();
      expect(res.status).toBe(200);
      // The render's ffmpeg and the engine's reaper shell at least (ffprobe runs may be too short to catch).
      expect(seen.map((p) => p.name)).toContain('ffmpeg');
      expect(seen.map((p) => p.name)).toContain('sh');
      expectNoSecrets(seen);
    } finally {
      await engine.close();
    }
  });

  it("direct ffmpeg and ffprobe runs, their shells and fluent-ffmpeg's runs get none of them either", async () => {
    const stop = new AbortController();
    const endless = 'testsrc2=size=160x90:rate=10';
    const runs = [
      runProcess(ffmpegPath(), ['-nostdin', '-re', '-f', 'lavfi', '-i', endless, '-f', 'null', '-'], {
        op: 'test',
        signal: stop.signal,
      }),
      runProcess(
        ffprobePath(),
        ['-v', 'error', '-f', 'lavfi', '-show_entries', 'frame=pts', '-of', 'csv', `${endless},realtime`],
        { op: 'test', signal: stop.signal },
      ),
      runFluent(
        ffmpeg().input(endless).inputOptions(['-re', '-f', 'lavfi']).output('-').outputOptions(['-f', 'null']),
        ffmpegPath(),
        { signal: stop.signal },
      ),
    ].map((run) => run.catch(() => undefined));
    try {
      const watcher = watchDescendants(process.pid);
      // Two direct runs (ffmpeg, ffprobe) and fluent's ffmpeg below its watchdog script (`ffmpeg-N`).
      // Judged on what the watcher read, not on a separate look at /proc: fluent's short capability
      // probes (`ffmpeg -formats`…) come and go, and a look that counted one of them could end the
      // wait before the watcher had read the run that stays.
      const enough = (processes: Seen[]): boolean => {
        const names = processes.map((p) => p.name);
        return (
          names.filter((n) => n === 'ffmpeg').length >= 2 &&
          names.includes('ffprobe') &&
          names.some((n) => n.startsWith('ffmpeg-')) &&
          processes.some((p) => p.pid === reaperPid())
        );
      };
      const running = await waitUntil(() => enough(watcher.sofar()), 20_000);
      const seen = await watcher.stop();
      expect(running, JSON.stringify(seen.map((p) => p.name))).toBe(true);
      // The shared reaper, and fluent's watchdog script, besides the binaries.
      expect(seen.filter((p) => p.name !== 'ffmpeg' && p.name !== 'ffprobe').length).toBeGreaterThanOrEqual(2);
      expectNoSecrets(seen);
    } finally {
      stop.abort();
      await Promise.all(runs);
    }
  });
});
