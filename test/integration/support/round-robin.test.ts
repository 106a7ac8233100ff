import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startRoundRobin } from '../../support/round-robin.ts';
import type { RoundRobin } from '../../support/round-robin.ts';

/** A node that answers with its name, the method, path, one header and the body it read. */
async function node(
  name: string,
  handle?: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; host: string; port: number; closed: string[] }> {
  const closed: string[] = [];
  const server = createServer(
    handle ??
      ((req, res) => {
        const parts: Buffer[] = [];
        req.on('data', (d: Buffer) => parts.push(d));
        req.on('end', () =>
          res
            .writeHead(201, { 'x-node': name, 'set-cookie': ['a=1', 'b=2'] })
            .end(`${req.method} ${req.url} ${String(req.headers['x-test'])} ${Buffer.concat(parts).length}`),
        );
      }),
  );
  server.on('request', (req: IncomingMessage, res: ServerResponse) =>
    res.on('close', () => {
      if (!res.writableFinished) closed.push(req.url ?? '');
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, host: '127.0.0.1', port: (server.address() as AddressInfo).port, closed };
}

let proxy: RoundRobin | null = null;
const servers: Server[] = [];
afterEach(async () => {
  await proxy?.close();
  proxy = null;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('the round-robin proxy in front of two test nodes (test/support/round-robin.ts)', () => {
  it('hands each request to the next node, on one keep-alive connection too, with method, headers and body', async () => {
    const a = await node('a');
    const b = await node('b');
    servers.push(a.server, b.server);
    proxy = await startRoundRobin();
    proxy.route([a, b]);
    const answers = [];
    // fetch keeps its connection to the proxy alive between these: the turn is per request.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${proxy.origin}/v1/x?i=${i}`, {
        method: 'POST',
        headers: { 'x-test': `t${i}` },
        body: Buffer.alloc(100_000 * (i + 1)),
      });
      answers.push([res.status, res.headers.get('x-node'), res.headers.getSetCookie(), await res.text()]);
    }
    expect(answers).toEqual([
      [201, 'a', ['a=1', 'b=2'], 'POST /v1/x?i=0 t0 100000'],
      [201, 'b', ['a=1', 'b=2'], 'POST /v1/x?i=1 t1 200000'],
      [201, 'a', ['a=1', 'b=2'], 'POST /v1/x?i=2 t2 300000'],
      [201, 'b', ['a=1', 'b=2'], 'POST /v1/x?i=3 t3 400000'],
    ]);
    expect(proxy.forwarded()).toEqual([2, 2]);
  });

  it('a client that goes away mid-answer takes the node’s connection with it', async () => {
    const a = await node('a', (_req, res) => {
      res.writeHead(200);
      res.write('first part');
      // …and never ends: only the client leaving ends it.
    });
    servers.push(a.server);
    proxy = await startRoundRobin();
    proxy.route([a]);
    const aborter = new AbortController();
    const res = await fetch(`${proxy.origin}/slow`, { signal: aborter.signal });
    const reader = res.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('first part');
    aborter.abort();
    for (let i = 0; i < 200 && a.closed.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.closed).toEqual(['/slow']);
  });

  it('a node that is down is a 502, and the next request goes to the next node', async () => {
    const up = await node('up');
    const down = await node('down');
    servers.push(up.server);
    await new Promise((r) => down.server.close(r));
    proxy = await startRoundRobin();
    proxy.route([down, up]);
    expect((await fetch(`${proxy.origin}/x`)).status).toBe(502);
    const res = await fetch(`${proxy.origin}/x`);
    expect([res.status, res.headers.get('x-node')]).toEqual([201, 'up']);
  });
});
