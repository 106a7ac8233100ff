import { describe, expect, it } from 'vitest';
import { installBridge, type PreloadDeps } from '../../../../electron/preload/bridge.ts';
import { ELECTRON_IPC, type ClipdeskBridge } from '../../../../shared/ipc/client.ts';

type MessageListener = Parameters<PreloadDeps['window']['addEventListener']>[1];

function setup() {
  let listener: MessageListener | null = null;
  const win: PreloadDeps['window'] = {
    addEventListener: (_t, l) => (listener = l),
    location: { origin: 'clipdesk-app://app' },
  };
  const posted: { channel: string; transfer: unknown[] }[] = [];
  const reported: { channel: string; args: unknown[] }[] = [];
  const exposed = new Map<string, ClipdeskBridge>();
  class FakeFile {}
  installBridge({
    window: win,
    ipcRenderer: {
      postMessage: (channel, _m, transfer) => posted.push({ channel, transfer }),
      sendSync: (channel, ...args) => reported.push({ channel, args }),
    },
    contextBridge: { exposeInMainWorld: (k, api) => exposed.set(k, api) },
    getPathForFile: () => '/home/me/frame.png',
    isFile: (v) => v instanceof FakeFile,
    platform: 'linux',
  });
  const send = (event: Partial<Parameters<MessageListener>[0]>) =>
    listener!({
      source: win,
      origin: 'clipdesk-app://app',
      data: ELECTRON_IPC.connectMessage,
      ports: ['port'],
      ...event,
    });
  return { posted, reported, exposed, send, FakeFile };
}

describe('preload bridge', () => {
  it('forwards the page’s port to main, and nothing else', () => {
    const { posted, send } = setup();
    send({});
    expect(posted).toEqual([{ channel: ELECTRON_IPC.portChannel, transfer: ['port'] }]);
    send({ source: {} }); // a frame or another window
    send({ origin: 'https://evil.test' });
    send({ data: 'something else' });
    send({ ports: [] });
    send({ ports: ['a', 'b'] });
    expect(posted).toHaveLength(1);
  });

  it('exposes only the transport, the platform and getPathForFile (never ipcRenderer)', () => {
    const { exposed, FakeFile } = setup();
    const bridge = exposed.get('clipdesk')!;
    expect([...exposed.keys()]).toEqual(['clipdesk']);
    expect(Object.keys(bridge).sort()).toEqual(['getPathForFile', 'platform', 'transport']);
    expect(bridge.transport).toBe('electron');
    expect(bridge.getPathForFile(new FakeFile())).toBe('/home/me/frame.png');
    expect(bridge.getPathForFile('/etc/passwd')).toBe('');
    expect(Object.isFrozen(bridge)).toBe(true);
  });
});

describe('preload bridge: dropped paths', () => {
  it('reports each path it resolves from a real File to main before the page gets it', () => {
    const { exposed, reported, FakeFile } = setup();
    const bridge = exposed.get('clipdesk')!;
    expect(bridge.getPathForFile('/etc/passwd')).toBe('');
    expect(bridge.getPathForFile({ path: '/etc/passwd' })).toBe('');
    expect(reported).toEqual([]);
    expect(bridge.getPathForFile(new FakeFile())).toBe('/home/me/frame.png');
    expect(reported).toEqual([{ channel: ELECTRON_IPC.droppedPathChannel, args: ['/home/me/frame.png'] }]);
  });
});
