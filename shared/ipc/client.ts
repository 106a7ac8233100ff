import type { ContractRouterClient } from '@orpc/contract';
import type { IpcContract } from './contract.ts';

/** The typed client the renderer holds (renderer/src/lib/ipc.ts builds it from an oRPC link). */
export type IpcClient = ContractRouterClient<IpcContract>;

/** Channel names of the Electron binding (preload ↔ main), shared so neither side drifts. */
export const ELECTRON_IPC = {
  /** window.postMessage from the renderer to the preload, carrying the client's MessagePort. */
  connectMessage: 'clipdesk:ipc-connect',
  /** ipcRenderer.postMessage from the preload to main, carrying the same port. */
  portChannel: 'clipdesk:ipc-port',
  /**
   * ipcRenderer.sendSync from the preload to main: a path the preload resolved from a real File
   * (getPathForFile). Main accepts paths from the page only if they were reported here, or lie in
   * its own folders. Synchronous, so main knows the path before the page can use it.
   */
  droppedPathChannel: 'clipdesk:dropped-path',
} as const;

/** Paths of the browser-mode host (electron/host), relative to its origin. */
export const HTTP_IPC = {
  /** oRPC RPCLink url: `${origin}/rpc`. */
  rpcPrefix: '/rpc',
  /** Local files (library, downloads) under `/local-media/<root>/<relative path>`. */
  localMediaPrefix: '/local-media/',
  /** Query parameter carrying the per-launch secret on the first request. */
  tokenParam: 't',
} as const;

/** What the preload exposes as `window.clipdesk` (Electron only; absent in browser mode). */
export interface ClipdeskBridge {
  readonly transport: 'electron';
  readonly platform: string;
  /**
   * The absolute path of a File dropped from the OS (or picked), or '' for a File not backed by
   * one. Only paths obtained here are accepted by uploads.fromPath / uploads.probe / a path start
   * frame (besides files in the library and download folders).
   */
  getPathForFile(file: unknown): string;
}
