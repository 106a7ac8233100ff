// One current profile for the app, the CLI and `clipdesk mcp` (docs/cli.md "Which service"), and
// `clipdesk mcp --print-config`, whose printed command starts from any folder (docs/agents.md).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ManualClock } from '../../../shared/clock.ts';
import { startService } from '../../../server/index.ts';
import type { RunningService } from '../../../server/index.ts';
import { startAppEndpoint } from '../../../electron/host/app-endpoint-host.ts';
import { memoryKeychain } from '../../support/memory-keychain.ts';
import { startTestApp } from '../../support/test-app.ts';
import { childEnv, TOOL_NAMES } from '../mcp/helpers.ts';
import { runCli } from './run-cli.ts';

let home: string;
let service: RunningService;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'clipdesk-profiles-'));
  // The clock stands still: the few requests below never straddle a rate window.
  const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000);
  service = await startService({ dataDir: join(home, 'remote'), sweepIntervalMs: 0, clock });
});
afterAll(async () => {
  await service?.close();
  await rm(home, { recursive: true, force: true });
});

/** No keychain on this machine: the key file, chosen by the variable for every command. */
const FILE_STORE = { CLIPDESK_KEY_STORE: 'file' };

describe('the current profile', () => {
  it('login makes the service current for plain commands; profiles use switches back; CLIPDESK_BASE_URL wins', async () => {
    const data = join(home, 'data');
    const cli = (args: string[], env: Record<string, string> = {}, input = '') =>
      runCli(home, ['--data', data, ...args], { ...FILE_STORE, ...env }, input);
    const { key } = await service.createKey({ user: 'ann', tier: 'free' });

    const login = await cli(['login', '--base-url', service.url], {}, `${key}\n`);
    expect(login.code, login.stderr).toBe(0);
    const listed = await cli(['profiles', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`* ${new URL(service.url).host}\tremote\t${service.url}\tkey …${key.slice(-4)}\n`);
    expect(listed.stdout).toContain('  Local engine\tlocal\tbuilt-in\tneeds no key\n');

    // No --base-url: the current profile, the remote service (the built-in engine's tier is pro).
    const remote = await cli(['usage']);
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stdout).toMatch(/^tier\tfree$/m);

    // doctor checks the same service, and says why it is the one.
    const doctor = await cli(['doctor']);
    expect(doctor.stdout).toMatch(new RegExp(`^ok +service +.*\\(${service.url}, the current profile\\)$`, 'm'));

    const use = await cli(['profiles', 'use', 'Local engine']);
    expect(use.code, use.stderr).toBe(0);
    expect(use.stderr).toContain('The current profile is now Local engine (the built-in Local engine)');
    expect((await cli(['profiles', 'list'])).stdout).toMatch(/^\* Local engine\t/m);
    const local = await cli(['usage']);
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toMatch(/^tier\tpro$/m);

    // CLIPDESK_BASE_URL wins over the current profile, with the stored key of that service.
    const byEnv = await cli(['usage'], { CLIPDESK_BASE_URL: service.url });
    expect(byEnv.stdout).toMatch(/^tier\tfree$/m);

    const unknown = await cli(['profiles', 'use', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No profile named nope (clipdesk profiles list shows them)');
  });
});

describe('profiles use beside a running app', () => {
  it('asks the app to switch, so its queue and the CLI use the same profile', async () => {
    const data = join(home, 'app-data');
    const { app, ipc } = startTestApp({
      dataDir: data,
      secrets: memoryKeychain(),
      downloadDir: join(data, 'downloads'),
    });
    const host = await startAppEndpoint(data, { router: app.router });
    try {
      const studio = await ipc.profiles.create({ name: 'studio', baseUrl: service.url });
      expect((await ipc.profiles.list()).activeId).toBe('local');
      const use = await runCli(home, ['--data', data, 'profiles', 'use', 'studio'], FILE_STORE);
      expect(use.code, use.stderr).toBe(0);
      expect(use.stderr).toContain(`The current profile is now studio (${service.url}), in the running app too`);
      expect((await ipc.profiles.list()).activeId).toBe(studio.id);
    } finally {
      await host.close();
      await app.dispose();
    }
  });
});

describe('clipdesk mcp --print-config', () => {
  it.each(['claude', 'vscode'] as const)(
    '%s: the printed command starts from another folder and lists the tools',
    async (client) => {
      const data = join(home, `mcp-${client}`);
      const printed = await runCli(home, ['--data', data, 'mcp', '--print-config', client]);
      expect(printed.code, printed.stderr).toBe(0);
      const config = JSON.parse(printed.stdout) as Record<string, Record<string, { command: string; args: string[] }>>;
      const server = (client === 'vscode' ? config['servers'] : config['mcpServers'])!['clipdesk']!;
      expect(server.command).toMatch(/^\//);
      expect(server.args[0]).toMatch(/^\/.*bin\/clipdesk\.js$/);
      // As an MCP client starts it: its own working folder, nothing of this repository on PATH.
      const elsewhere = await mkdtemp(join(tmpdir(), 'clipdesk-elsewhere-'));
      const transport = new StdioClientTransport({
        command: server.command,
        args: server.args,
        cwd: elsewhere,
        env: { ...childEnv(home), PATH: '/usr/bin:/bin' },
        stderr: 'pipe',
      });
      const mcp = new Client({ name: 'clipdesk-test', version: '1.0.0' });
      try {
        await mcp.connect(transport);
        const { tools } = await mcp.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(TOOL_NAMES);
      } finally {
        await mcp.close();
        await rm(elsewhere, { recursive: true, force: true });
      }
    },
  );
});
