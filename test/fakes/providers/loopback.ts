import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningFake } from './types.ts';

/** One request as a fake sees it: what `RunningFake.requests` records, plus the raw body. */
export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
  raw: Buffer;
}

/**
 * A loopback HTTP server for a provider fake: it reads each body whole, records the request
 * (JSON bodies parsed; other bodies are not recorded), and hands it to `handle`. A handler that
 * throws answers 500, so a fake's own bug shows up as a failing test rather than a hang.
 */
export async function startLoopback(
  handle: (req: FakeRequest, res: ServerResponse, http: IncomingMessage) => Promise<void> | void,
): Promise<{ baseUrl: string; requests: RunningFake['requests']; close(): Promise<void> }> {
  const requests: RunningFake['requests'] = [];
  // Providers' front ends keep idle connections for a minute or more (Node's own default is 5 s),
  // so a client polling every few seconds reuses its connections, as it would against the real API.
  const server = createServer({ keepAliveTimeout: 65_000 }, (http, res) => {
    const chunks: Buffer[] = [];
    http.on('data', (chunk: Buffer) => chunks.push(chunk));
    http.on('error', () => res.destroy());
    http.on('end', () => {
      const raw = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(http.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      let body: unknown;
      if (raw.length > 0 && (headers['content-type'] ?? '').includes('application/json')) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          body = undefined;
        }
      }
      const req: FakeRequest = { method: http.method ?? 'GET', path: http.url ?? '/', headers, raw };
      if (body !== undefined) req.body = body;
      const { method, path } = req;
      requests.push(body === undefined ? { method, path, headers } : { method, path, headers, body });
      Promise.resolve()
        .then(() => handle(req, res, http))
        .catch((err: unknown) => {
          if (!res.headersSent) sendJson(res, 500, { detail: `fake error: ${String(err)}` });
          else res.destroy();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A 200 that claims JSON and is not: the `malformed` scenario. */
export function sendMalformed(res: ServerResponse): void {
  const text = '{"id": "truncated';
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Posts a webhook delivery; failures are ignored (the receiver may already be gone). */
export async function deliver(url: string, body: string, headers: Record<string, string>): Promise<void> {
  await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
    .then((res) => res.arrayBuffer())
    .catch(() => undefined);
}

/** Stands in for the service's webhook endpoint: collects each delivery (lower-cased headers, raw body). */
export async function startWebhookReceiver(): Promise<{
  url: string;
  /** The next delivery not yet taken (waits for it). */
  next(): Promise<{ headers: Record<string, string>; body: Buffer }>;
  close(): Promise<void>;
}> {
  const received: Array<{ headers: Record<string, string>; body: Buffer }> = [];
  const waiting: Array<(delivery: { headers: Record<string, string>; body: Buffer }) => void> = [];
  const server = await startLoopback((req, res) => {
    res.writeHead(200).end();
    const delivery = { headers: req.headers, body: req.raw };
    const waiter = waiting.shift();
    if (waiter) waiter(delivery);
    else received.push(delivery);
  });
  return {
    url: `${server.baseUrl}/v1/webhooks/provider`,
    next: () => {
      const ready = received.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => server.close(),
  };
}
