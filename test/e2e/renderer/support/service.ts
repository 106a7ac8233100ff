import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = 'server/cli/main.ts';

/** A standalone service (`clipdesk-service serve`), the "remote" a creator adds a profile for. */
export interface RemoteService {
  url: string;
  dataDir: string;
  createKey(user: string, tier: 'free' | 'basic' | 'pro'): Promise<{ id: string; key: string }>;
  revokeKey(id: string): Promise<void>;
  /** `users set-limits USER --FLAG VALUE…`: an operator's per-account override of the tier's table. */
  setLimits(user: string, limits: Record<string, number>): Promise<void>;
  stop(): Promise<void>;
}

export async function startService(): Promise<RemoteService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-e2e-svc-'));
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
  });
  return {
    url,
    dataDir,
    async createKey(user, tier) {
      const { stdout } = await run(process.execPath, [
        CLI,
        'keys',
        'create',
        '--user',
        user,
        '--tier',
        tier,
        '--data',
        dataDir,
        '--json',
      ]);
      return JSON.parse(stdout) as { id: string; key: string };
    },
    async revokeKey(id) {
      await run(process.execPath, [CLI, 'keys', 'revoke', id, '--data', dataDir]);
    },
    async setLimits(user, limits) {
      const flags = Object.entries(limits).flatMap(([flag, value]) => [`--${flag}`, String(value)]);
      await run(process.execPath, [CLI, 'users', 'set-limits', user, ...flags, '--data', dataDir]);
    },
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
