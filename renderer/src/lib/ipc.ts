/**
 * The renderer's only way to reach main. It holds one typed oRPC client of the shared contract
 * (`shared/ipc`), over whichever transport this window has:
 * - Electron: the preload exposes `window.clipdesk`; we hand it a MessagePort and talk over that.
 * - Browser mode: the loopback host serves the contract at `/rpc`, behind the per-launch secret
 *   (a cookie the host set from `?t=`; we forward `t` too when the page still has it).
 * Stores call `ipc()` and never see which one; tests install a client with `setIpcClient`.
 */
import { createORPCClient, ORPCError } from '@orpc/client';
import { RPCLink as FetchLink } from '@orpc/client/fetch';
import { RPCLink as PortLink } from '@orpc/client/message-port';
import type { AppEvent, AppEventType, ClipdeskBridge, IpcClient } from '../../../shared/ipc/index.ts';
import { ELECTRON_IPC, HTTP_IPC } from '../../../shared/ipc/client.ts';

export interface IpcErrorShape {
  code: string;
  message: string;
  retryAfter?: number;
  status?: number;
}

/** A failed call, carrying the service's (or main's) message so the UI can show it as is. */
export class IpcError extends Error {
  readonly code: string;
  readonly retryAfter: number | undefined;
  readonly status: number | undefined;
  constructor(error: IpcErrorShape) {
    super(error.message);
    this.name = 'IpcError';
    this.code = error.code;
    this.retryAfter = error.retryAfter;
    this.status = error.status;
  }
}

declare global {
  interface Window {
    clipdesk?: ClipdeskBridge;
  }
}

let client: IpcClient | null = null;

export function setIpcClient(next: IpcClient | null): void {
  client = next;
  stopEvents();
}

/** The typed client. Calls reject with `IpcError` (see `wrapErrors`). */
export function ipc(): IpcClient {
  client ??= wrapErrors(createClient());
  return client;
}

export function bridge(): ClipdeskBridge | undefined {
  return typeof window === 'undefined' ? undefined : window.clipdesk;
}

function createClient(): IpcClient {
  const electron = bridge();
  if (electron) {
    const channel = new MessageChannel();
    window.postMessage(ELECTRON_IPC.connectMessage, '*', [channel.port2]);
    channel.port1.start();
    return createORPCClient<IpcClient>(new PortLink({ port: channel.port1 }));
  }
  const token = new URLSearchParams(window.location.search).get(HTTP_IPC.tokenParam);
  const url = new URL(HTTP_IPC.rpcPrefix, window.location.origin);
  if (token) url.searchParams.set(HTTP_IPC.tokenParam, token);
  return createORPCClient<IpcClient>(
    new FetchLink({
      url: url.href,
      fetch: (request, init) => globalThis.fetch(request, { ...init, credentials: 'same-origin' }),
    }),
  );
}

/** Normalises any failure (oRPC error, network error, abort) into an IpcError. */
export function toIpcError(error: unknown): IpcError {
  if (error instanceof IpcError) return error;
  if (error instanceof ORPCError) {
    const data = (error.data ?? {}) as { retryAfter?: number; status?: number };
    return new IpcError({
      code: String(error.code),
      message: error.message || String(error.code),
      ...(typeof data.retryAfter === 'number' ? { retryAfter: data.retryAfter } : {}),
      status: typeof data.status === 'number' ? data.status : error.status,
    });
  }
  if (error instanceof TypeError && /fetch|network/i.test(error.message)) {
    return new IpcError({
      code: 'network_error',
      message: 'Lost the connection to Clipdesk. Is the app still running?',
    });
  }
  if (error instanceof Error) return new IpcError({ code: 'internal_error', message: error.message });
  return new IpcError({ code: 'internal_error', message: String(error) });
}

/**
 * A proxy over the client whose calls reject with IpcError, whatever threw underneath. oRPC's
 * client is itself a tree of callable proxies, so we follow the path and call the leaf.
 */
export function wrapErrors(target: IpcClient): IpcClient {
  const at = (path: readonly string[]): unknown =>
    new Proxy(function () {}, {
      get(_fn, key) {
        if (typeof key !== 'string' || key === 'then') return undefined;
        return at([...path, key]);
      },
      async apply(_fn, _this, args: unknown[]) {
        let node: unknown = target;
        for (const key of path) node = (node as Record<string, unknown>)[key];
        try {
          // Called directly: `.apply` on oRPC's proxy would be read as a route segment.
          return await (node as (...a: unknown[]) => Promise<unknown>)(...args);
        } catch (error) {
          throw toIpcError(error);
        }
      },
    });
  return at([]) as IpcClient;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return 'Something went wrong';
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof IpcError ? error.code : undefined;
}

// ---------- Events: one stream, many listeners ----------

type Listener = (event: AppEvent) => void;
const listeners = new Set<Listener>();
const reconnectListeners = new Set<() => void>();
let abort: AbortController | null = null;

/**
 * Called each time the event stream comes back after a break: what happened meanwhile was never
 * heard, so whoever mirrors main's state reads it again (a job that finished while the stream was
 * down would otherwise stay "Downloading" on screen).
 */
export function onReconnect(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}

/** Listens to every AppEvent of the given type. The stream starts with the first listener. */
export function onEvent<T extends AppEventType>(
  type: T,
  listener: (event: Extract<AppEvent, { type: T }>) => void,
): () => void {
  const wrapped: Listener = (event) => {
    if (event.type === type) listener(event as Extract<AppEvent, { type: T }>);
  };
  listeners.add(wrapped);
  startEvents();
  return () => {
    listeners.delete(wrapped);
    if (listeners.size === 0) stopEvents();
  };
}

function startEvents(): void {
  if (abort) return;
  const controller = new AbortController();
  abort = controller;
  void (async () => {
    let delay = 500;
    let connectedBefore = false;
    while (!controller.signal.aborted) {
      try {
        const stream = await ipc().events.subscribe(undefined, { signal: controller.signal });
        delay = 500;
        if (connectedBefore) for (const l of [...reconnectListeners]) l();
        connectedBefore = true;
        for await (const event of stream) for (const l of [...listeners]) l(event);
      } catch {
        // The host restarted or the port closed: reconnect with backoff.
      }
      if (controller.signal.aborted) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10_000);
    }
  })();
}

function stopEvents(): void {
  abort?.abort();
  abort = null;
}
