// A TCP proxy in front of the real engine that can cut a connection on cue: the faults a real
// network produces (a dropped connection, a server that dies mid-body) without mocking the service.
import { createServer, connect } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Fault {
  /** Applies to the first connection whose request contains this text (e.g. 'POST /v1/videos'). */
  match: string;
  /** Drop the client's side right after the request is forwarded (the server keeps working). */
  dropClientAfterRequest?: boolean;
  /** Cut both sides after this many response bytes. */
  cutAfterResponseBytes?: number;
  /** Called when the cut happened. */
  onCut?: () => void;
}

export interface FaultProxy {
  origin: string;
  port: number;
  /** Where connections go; change it to follow a restarted service. */
  targetPort: number;
  faults: Fault[];
  close(): Promise<void>;
}

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  const proxy: FaultProxy = {
    origin: '',
    port: 0,
    targetPort,
    faults: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    const upstream = connect(proxy.targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    let fault: Fault | null = null;
    let sent = 0;
    client.on('data', (chunk: Buffer) => {
      if (!fault) {
        const text = chunk.toString('latin1');
        const i = proxy.faults.findIndex((f) => text.includes(f.match));
        if (i >= 0) fault = proxy.faults.splice(i, 1)[0]!;
      }
      upstream.write(chunk);
      if (fault?.dropClientAfterRequest) {
        const f = fault;
        setTimeout(() => {
          client.destroy();
          f.onCut?.();
        }, 100);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (client.destroyed || (fault?.cutAfterResponseBytes !== undefined && sent >= fault.cutAfterResponseBytes))
        return; // the server's answer goes nowhere, as on a dropped line
      const limit = fault?.cutAfterResponseBytes;
      if (limit !== undefined && sent + chunk.length >= limit) {
        // Give the client time to take in what it got before the line goes dead.
        client.write(chunk.subarray(0, Math.max(0, limit - sent)), () =>
          setTimeout(() => {
            client.destroy();
            upstream.destroy();
            fault?.onCut?.();
          }, 300),
        );
        sent = limit;
        return;
      }
      sent += chunk.length;
      client.write(chunk);
    });
    client.on('error', () => undefined);
    upstream.on('error', () => client.destroy());
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.origin = `http://127.0.0.1:${proxy.port}`;
  return proxy;
}
