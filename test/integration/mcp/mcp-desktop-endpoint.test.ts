import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ENDPOINT_FILE } from '../../../electron/app/app-endpoint.ts';
import type { App } from '../../../electron/app/composition-root.ts';
import { startAppEndpoint } from '../../../electron/host/app-endpoint-host.ts';
import type { Host } from '../../../electron/host/server.ts';
import { logFilePath } from '../../../shared/node/log-path.ts';
import { memoryKeychain } from '../../support/memory-keychain.ts';
import { startTestApp } from '../../support/test-app.ts';
import { connectStdio, ok } from './helpers.ts';

/**
 * The desktop window's endpoint (what electron/main starts, minus Electron): the IPC contract
 * alone on loopback, announced in `<data>/app-endpoint.json`, so `clipdesk mcp` goes through the
 * window's core; and a file left by a killed app, which `clipdesk mcp` must see through
 * (docs/agents.md, docs/security.md).
 */
let dir: string;
let app: App;
let ipc: ReturnType<typeof startTestApp>['ipc'];
let host: Host;
let appDisposed = false;
const endpointFile = () => path.join(dir, APP_ENDPOINT_FILE);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'clipdesk-mcp-desktop-'));
  ({ app, ipc } = startTestApp({ dataDir: dir, secrets: memoryKeychain(), downloadDir: path.join(dir, 'downloads') }));
  host = await startAppEndpoint(dir, { router: app.router });
}, 60_000);

afterAll(async () => {
  await host?.close();
  if (!appDisposed) await app?.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('the desktop app’s endpoint for clipdesk mcp', () => {
  it('is announced owner-only and serves the contract alone, behind the secret and the origin check', async () => {
    expect(statSync(endpointFile()).mode & 0o777).toBe(0o600);
    const announced = JSON.parse(readFileSync(endpointFile(), 'utf8')) as Record<string, unknown>;
    expect(announced).toEqual({ origin: host.origin, port: host.port, secret: host.secret, pid: process.pid });
    expect(host.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const cookie = `clipdesk_${host.port}=${host.secret}`;
    const rpc = (headers: Record<string, string>) =>
      fetch(`${host.origin}/rpc/app/info`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    expect((await rpc({ cookie })).status).toBe(200);
    expect((await rpc({})).status).toBe(401);
    expect((await rpc({ cookie: `clipdesk_${host.port}=wrong` })).status).toBe(401);
    expect((await rpc({ cookie, origin: 'http://evil.example' })).status).toBe(403);
    // No renderer pages, no local media, no cookie trade: only `/rpc`.
    expect((await fetch(`${host.origin}/`, { headers: { cookie } })).status).toBe(404);
    expect((await fetch(`${host.origin}/?t=${host.secret}`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${host.origin}/local-media/downloads/x.mp4`, { headers: { cookie } })).status).toBe(404);
  });

  it('puts an agent’s job in the app’s queue, and shows the agent the app’s cancel', async () => {
    const { client, stderr } = await connectStdio(dir);
    try {
      expect(stderr()).toContain('through the running app');
      const started = await ok<{ generation_id: string }>(client, 'generate_video', {
        model: 'clipdesk/motion',
        prompt: 'a lighthouse at dusk',
        size: '360p',
        duration: 2,
      });
      expect((await ipc.jobs.list()).jobs.map((j) => j.id)).toContain(started.generation_id);
      await ipc.jobs.cancel({ id: started.generation_id });
      const seen = await ok<{ status: string }>(client, 'get_generation', { generation_id: started.generation_id });
      expect(seen.status).toBe('canceled');
    } finally {
      await client.close();
    }
  }, 120_000);

  it('removes the file on close', async () => {
    await host.close();
    expect(existsSync(endpointFile())).toBe(false);
  });
});

describe('a file left by a killed app', () => {
  it('is reported and removed, and clipdesk mcp runs its own core', async () => {
    // The app is gone too: only its file is left.
    appDisposed = true;
    await app.dispose();
    const gone = spawn(process.execPath, ['-e', '']);
    const deadPid = await new Promise<number>((resolve) => gone.once('exit', () => resolve(gone.pid!)));
    writeFileSync(
      endpointFile(),
      JSON.stringify({ origin: 'http://127.0.0.1:9', port: 9, secret: 'left-behind', pid: deadPid }),
      { mode: 0o600 },
    );
    const { client, stderr } = await connectStdio(dir);
    await client.close();
    expect(stderr()).toContain('its own core');
    expect(existsSync(endpointFile())).toBe(false);
    await expect
      .poll(() => readFileSync(logFilePath(dir, 'mcp'), 'utf8'), { timeout: 30_000 })
      .toContain(
        `stale ${APP_ENDPOINT_FILE}: the app that wrote it (process ${deadPid}) is gone; removing it and running the core here`,
      );
  }, 120_000);
});
