import { ELECTRON_IPC, type ClipdeskBridge } from '../../shared/ipc/client.ts';

/**
 * The preload's whole job, as a function of the few APIs it touches (tested with fakes):
 * - forward the renderer's MessagePort to main (the IPC channel); `ipcRenderer` itself is never exposed;
 * - expose `window.clipdesk` with the transport name and `getPathForFile` for OS drops; each path
 *   it resolves is reported to main first, since main accepts a path from the page only if the
 *   preload vouched for it (electron/app/path-grants.ts).
 */
export interface PreloadDeps {
  window: {
    addEventListener(
      type: 'message',
      listener: (event: { source: unknown; origin: string; data: unknown; ports: readonly unknown[] }) => void,
    ): void;
    readonly location: { readonly origin: string };
  };
  ipcRenderer: {
    postMessage(channel: string, message: unknown, transfer: unknown[]): void;
    sendSync(channel: string, ...args: unknown[]): unknown;
  };
  contextBridge: { exposeInMainWorld(key: string, api: ClipdeskBridge): void };
  getPathForFile(file: never): string;
  isFile(value: unknown): boolean;
  platform: string;
}

export function installBridge(deps: PreloadDeps): void {
  deps.window.addEventListener('message', (event) => {
    // Only the page itself (not a frame, not another origin) can ask for the channel.
    if (event.source !== deps.window || event.origin !== deps.window.location.origin) return;
    if (event.data !== ELECTRON_IPC.connectMessage || event.ports.length !== 1) return;
    deps.ipcRenderer.postMessage(ELECTRON_IPC.portChannel, null, [event.ports[0]]);
  });
  const bridge: ClipdeskBridge = Object.freeze({
    transport: 'electron' as const,
    platform: deps.platform,
    getPathForFile: (file: unknown) => {
      if (!deps.isFile(file)) return '';
      const path = deps.getPathForFile(file as never);
      if (path) deps.ipcRenderer.sendSync(ELECTRON_IPC.droppedPathChannel, path);
      return path;
    },
  });
  deps.contextBridge.exposeInMainWorld('clipdesk', bridge);
}
