// The package's bins as a user starts them: with the machine's Node (whatever version is first on
// PATH outside the project, 20 on the development machines) and with the pinned Node 22, directly
// through node_modules/.bin, and through npx without engine warnings (docs/cli.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { exited, serveProcess } from '../../support/service-process.ts';
import { packageVersion } from '../../../shared/node/cli-program.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** PATH without the project's (or any package's) node_modules/.bin: what a user's shell has. */
const USER_PATH = (process.env['PATH'] ?? '')
  .split(delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .join(delimiter);

function onUserPath(name: string): string | null {
  for (const dir of USER_PATH.split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this folder
    }
  }
  return null;
}

const machineNode = onUserPath('node');
const nodes = [
  { name: `the pinned Node ${process.version}`, path: process.execPath },
  ...(machineNode
    ? [
        {
          name: `the machine's Node ${execFileSync(machineNode, ['--version'], { encoding: 'utf8' }).trim()}`,
          path: machineNode,
        },
      ]
    : []),
];

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, PATH: USER_PATH } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((r) => child.on('close', (code) => r({ code, stdout, stderr })));
}

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-bins-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe.each(nodes)('the bins under $name', ({ path: node }) => {
  it('clipdesk and clipdesk-service --version, from node_modules/.bin', async () => {
    for (const bin of ['clipdesk', 'clipdesk-service']) {
      const res = await run(node, [join(ROOT, 'node_modules', '.bin', bin), '--version']);
      expect(res, bin).toEqual({ code: 0, stdout: `${packageVersion()}\n`, stderr: '' });
    }
  });

  it('clipdesk-service serve listens, and stops cleanly on SIGTERM', async () => {
    const served = await serveProcess(dataDir, { node });
    const health = await fetch(served.url.replace(/\/v1$/, '/healthz'));
    expect(health.status).toBe(200);
    served.child.kill('SIGTERM');
    await exited(served.child);
    expect(served.child.exitCode).toBe(0);
  });
});

describe.runIf(onUserPath('npx'))('npx', () => {
  it('npx clipdesk --version prints the version and no engine warning', async () => {
    const res = await run(onUserPath('npx')!, ['clipdesk', '--version']);
    expect(res.stdout).toBe(`${packageVersion()}\n`);
    expect(res.stderr).not.toMatch(/EBADENGINE|warn/i);
    expect(res.code).toBe(0);
  });
});
