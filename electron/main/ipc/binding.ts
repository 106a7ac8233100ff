import type { IpcMainEvent } from 'electron';
import type { MessagePortMainLike } from '@orpc/client/message-port';
import { RPCHandler } from '@orpc/server/message-port';
import { ELECTRON_IPC } from '../../../shared/ipc/client.ts';
import { rpcHandlerOptions, type IpcRouter } from '../../app/router.ts';
import { isTrustedSender, type FrameLike } from '../security/origin.ts';

/** The part of an IpcMainEvent the binding reads. */
export interface PortEventLike {
  readonly senderFrame: FrameLike | null;
  readonly ports: readonly PortMainLike[];
}

/** Electron's MessagePortMain, as far as the binding uses it. */
export interface PortMainLike extends MessagePortMainLike {
  start(): void;
  close(): void;
}

export interface IpcMainLike {
  on(channel: string, listener: (event: IpcMainEvent, ...args: unknown[]) => void): unknown;
}

/** The part of a sendSync IpcMainEvent the dropped-path channel uses. */
export interface SyncEventLike {
  readonly senderFrame: FrameLike | null;
  returnValue: unknown;
}

/**
 * The Electron binding of the contract. The renderer hands main a MessagePort through the
 * preload; main checks who sent it — only the top-level frame of our own origin; a null frame,
 * a subframe or another origin gets its port closed — and then serves the same oRPC router as
 * browser mode over that port. The port is the capability: only the frame that passed the check
 * holds it.
 */
export function bindElectronIpc(
  ipcMain: IpcMainLike,
  router: IpcRouter,
  log: (message: string) => void = () => undefined,
): RPCHandler<{ transport: 'electron' }> {
  // The path prefix oRPC's message-port link uses is empty: routes arrive as `/domain/action`.
  const handler = new RPCHandler(router, rpcHandlerOptions(''));
  ipcMain.on(ELECTRON_IPC.portChannel, (event) => acceptPort(handler, event, log));
  return handler;
}

export function acceptPort(
  handler: RPCHandler<{ transport: 'electron' }>,
  event: PortEventLike,
  log: (message: string) => void,
): boolean {
  const [port, ...extra] = event.ports;
  if (!isTrustedSender(event.senderFrame) || !port || extra.length > 0) {
    for (const p of event.ports) p.close();
    log(
      `IPC port refused from ${event.senderFrame ? JSON.stringify(event.senderFrame.url.slice(0, 200)) : 'a null frame'}`,
    );
    return false;
  }
  handler.upgrade(port, { context: { transport: 'electron' } });
  port.start();
  return true;
}

/**
 * The preload reports each path it resolved from a real File (ELECTRON_IPC.droppedPathChannel);
 * main records it with `grant` (the app's path grants). Only our own top-level frame's preload is
 * heard: the page itself cannot reach this channel (context isolation).
 */
export function bindDroppedPaths(
  ipcMain: IpcMainLike,
  grant: (file: string) => boolean,
  log: (message: string) => void = () => undefined,
): void {
  ipcMain.on(ELECTRON_IPC.droppedPathChannel, (event, file) => acceptDroppedPath(grant, event, file, log));
}

export function acceptDroppedPath(
  grant: (file: string) => boolean,
  event: SyncEventLike,
  file: unknown,
  log: (message: string) => void,
): boolean {
  const ok = isTrustedSender(event.senderFrame) && typeof file === 'string' && grant(file);
  if (!ok)
    log(
      `Dropped path refused from ${event.senderFrame ? JSON.stringify(event.senderFrame.url.slice(0, 200)) : 'a null frame'}`,
    );
  // sendSync waits for an answer; the preload does not read it.
  event.returnValue = ok;
  return ok;
}
