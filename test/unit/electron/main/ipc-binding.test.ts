import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createORPCClient, ORPCError } from '@orpc/client';
import { RPCLink } from '@orpc/client/message-port';
import { RPCHandler } from '@orpc/server/message-port';
import { createIpcRouter, rpcHandlerOptions } from '../../../../electron/app/router.ts';
import { stubHandlers } from '../../../support/ipc-handlers.ts';
import {
  acceptDroppedPath,
  acceptPort,
  bindElectronIpc,
  type PortEventLike,
  type PortMainLike,
} from '../../../../electron/main/ipc/binding.ts';
import { ELECTRON_IPC, type IpcClient } from '../../../../shared/ipc/client.ts';

/** Electron's MessagePortMain delivers `{data}` to 'message' listeners; Node's port delivers data. */
class PortMain implements PortMainLike {
  closed = false;
  started = false;
  readonly port: MessagePort;
  constructor(port: MessagePort) {
    this.port = port;
  }
  start(): void {
    this.started = true;
  }
  close(): void {
    this.closed = true;
    this.port.close();
  }
  postMessage(message: unknown): void {
    this.port.postMessage(message);
  }
  on(event: string, listener: (arg?: { data: unknown }) => void): void {
    if (event === 'message') this.port.on('message', (data: unknown) => listener({ data }));
    if (event === 'close') this.port.on('close', () => listener());
  }
}

const router = createIpcRouter(
  stubHandlers({
    profiles: {
      keyStatus: ({ id }, ctx) => ({
        hasKey: true,
        last4: id.slice(-4),
        backend: 'keychain',
        message: ctx.transport,
      }),
    },
  }),
);
const open: MessagePort[] = [];
afterEach(() => {
  for (const p of open.splice(0)) p.close();
});

function connect(frame: PortEventLike['senderFrame']): {
  accepted: boolean;
  client: IpcClient;
  server: PortMain;
  link: RPCLink<Record<never, never>>;
} {
  const { port1, port2 } = new MessageChannel();
  open.push(port1, port2);
  const server = new PortMain(port2);
  const handler = new RPCHandler(router, rpcHandlerOptions(''));
  const accepted = acceptPort(handler, { senderFrame: frame, ports: [server] }, () => undefined);
  const link = new RPCLink({ port: port1 });
  const client: IpcClient = createORPCClient(link);
  port1.start();
  return { accepted, client, server, link };
}

const top = (url: string) => {
  const frame = { url, parent: null, top: undefined as unknown };
  frame.top = frame;
  return frame;
};

describe('Electron IPC binding', () => {
  it('serves the router over the port of our top-level frame', async () => {
    const { accepted, client, server } = connect(top('clipdesk-app://app/index.html'));
    expect(accepted).toBe(true);
    expect(server.started).toBe(true);
    await expect(client.profiles.keyStatus({ id: 'profile-1234' })).resolves.toMatchObject({
      last4: '1234',
      message: 'electron',
    });
  });

  it('validates input and answers typed errors over the port', async () => {
    const { client } = connect(top('clipdesk-app://app/index.html'));
    const bad = (await client.profiles.keyStatus({ id: '' }).catch((e: unknown) => e)) as ORPCError<string, unknown>;
    expect(bad.code).toBe('invalid_input');
    const missing = (await client.jobs.list().catch((e: unknown) => e)) as ORPCError<string, unknown>;
    expect(missing.code).toBe('not_available');
  });

  it('rejects unknown routes and prototype keys', async () => {
    const { link } = connect(top('clipdesk-app://app/index.html'));
    for (const path of [
      ['nope', 'x'],
      ['__proto__', 'toString'],
      ['app', '__proto__'],
      ['constructor', 'name'],
      ['app', 'info', 'x'],
      ['app'],
    ]) {
      const err = (await link.call(path, {}, { context: {} }).catch((e: unknown) => e)) as ORPCError<string, unknown>;
      const [d, a] = path;
      expect(err, `${d}.${a}`).toBeInstanceOf(ORPCError);
      expect(['not_found', 'NOT_FOUND']).toContain(err.code);
    }
  });

  it.each([
    ['a null frame', null],
    ['a subframe', { url: 'clipdesk-app://app/index.html', parent: {} }],
    ['a detached frame', { url: 'clipdesk-app://app/index.html', parent: null, detached: true }],
    ['another origin', top('https://evil.test/')],
    ['file://', top('file:///app/index.html')],
    ['a look-alike host', top('clipdesk-app://app.evil/index.html')],
    ['the media scheme', top('clipdesk-media://downloads/x.html')],
  ])('refuses %s: the port is closed and never served', (_name, frame) => {
    const { port1, port2 } = new MessageChannel();
    open.push(port1, port2);
    const server = new PortMain(port2);
    const handler = new RPCHandler(router, rpcHandlerOptions(''));
    expect(acceptPort(handler, { senderFrame: frame, ports: [server] }, () => undefined)).toBe(false);
    expect(server.closed).toBe(true);
    expect(server.started).toBe(false);
  });

  it('listens on the shared channel name only', () => {
    const channels: string[] = [];
    bindElectronIpc({ on: (channel: string) => channels.push(channel) }, router);
    expect(channels).toEqual([ELECTRON_IPC.portChannel]);
  });
});

describe('dropped paths from the preload', () => {
  const top = { url: 'clipdesk-app://app/index.html', parent: null };
  it('records paths only from our own top-level frame, and always answers the sync call', () => {
    const granted: string[] = [];
    const grant = (file: string) => (granted.push(file), true);
    const logs: string[] = [];
    const event = (senderFrame: PortEventLike['senderFrame']) => ({ senderFrame, returnValue: undefined as unknown });

    const ok = event(top);
    expect(acceptDroppedPath(grant, ok, '/home/me/frame.png', (m) => logs.push(m))).toBe(true);
    expect(ok.returnValue).toBe(true);

    for (const frame of [
      null,
      { url: 'https://evil.test/', parent: null },
      { url: 'clipdesk-app://app/index.html', parent: top },
      { url: 'clipdesk-app://app/index.html', parent: null, detached: true },
    ]) {
      const refused = event(frame);
      expect(acceptDroppedPath(grant, refused, '/etc/passwd', (m) => logs.push(m))).toBe(false);
      expect(refused.returnValue).toBe(false);
    }
    const notString = event(top);
    expect(acceptDroppedPath(grant, notString, { path: '/etc/passwd' }, () => undefined)).toBe(false);
    expect(granted).toEqual(['/home/me/frame.png']);
    expect(logs).toHaveLength(4);
  });
});
