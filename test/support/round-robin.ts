import { Agent, createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';

/**
 * The load balancer in front of a test's nodes (test/integration/server/helpers.ts): a loopback
 * HTTP server that hands each request to the next node in turn, whatever connection it came on (a
 * client's keep-alive connection sticks to no node), and streams the node's answer back. Response
 * bodies and request bodies over 1 MiB go through stream.pipeline; smaller request bodies are
 * gathered first (see `forward`). Hop-by-hop
 * headers are dropped both ways, as an HTTP proxy must; a node's `Connection: close` is passed on,
 * so that a refusal before the body was read closes the client's connection as the node meant.
 */
export interface RoundRobin {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** The nodes, in turn order. Requests before this is called are answered 503. */
  route(nodes: ReadonlyArray<{ host: string; port: number }>): void;
  /** Requests handed to each node so far, in turn order. */
  forwarded(): number[];
  /** Stops listening and closes every connection, both sides. */
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Raw headers (name, value, name, value …) without the hop-by-hop ones. */
function endToEnd(raw: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (!HOP_BY_HOP.has(name.toLowerCase())) kept.push(name, raw[i + 1]!);
  }
  return kept;
}

function wantsClose(connection: string | undefined): boolean {
  return (connection ?? '')
    .toLowerCase()
    .split(',')
    .some((token) => token.trim() === 'close');
}

/** Request bodies up to this size are gathered before they are forwarded (see `forward`). */
const GATHERED_BODY_BYTES = 1024 * 1024;

export async function startRoundRobin(opts: { port?: number } = {}): Promise<RoundRobin> {
  let nodes: Array<{ host: string; port: number; agent: Agent; count: number }> = [];
  let turn = 0;

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const node = nodes[turn++ % Math.max(1, nodes.length)];
    if (!node) {
      res.writeHead(503, { 'content-type': 'text/plain', connection: 'close' }).end('no node to forward to\n');
      return;
    }
    node.count++;
    const upstream = request({
      host: node.host,
      port: node.port,
      method: req.method,
      path: req.url,
      headers: endToEnd(req.rawHeaders),
      agent: node.agent,
    });
    let answered = false;
    upstream.on('continue', () => res.writeContinue());
    upstream.on('response', (answer) => {
      answered = true;
      // The node answered before the body was all there (a refusal, or a body past its limit):
      // the rest is not the node's to read. The proxy's own server discards what still comes and
      // closes the client's connection after the answer, as the node closed ours.
      if (!req.complete) req.unpipe(upstream);
      const headers = endToEnd(answer.rawHeaders);
      if (wantsClose(answer.headers.connection)) headers.push('Connection', 'close');
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
      pipeline(answer, res, () => undefined);
    });
    // The client gone before its answer is whole: the node sees its connection go too, as it
    // would with the client connected to it.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    const unreachable = (error: Error | null | undefined): void => {
      if (!error || answered || res.headersSent) return;
      res
        .writeHead(502, { 'content-type': 'text/plain', connection: 'close' })
        .end(`node unreachable: ${error.message}\n`);
    };
    // A small body is gathered first and sent in one write, as a load balancer buffers request
    // bodies (nginx's default): a node that refuses it at once (413) and closes would otherwise
    // race the proxy's writes, whose EPIPE loses the node's answer. A larger one streams.
    const gathered: Buffer[] = [];
    let size = 0;
    const gather = (chunk: Buffer): void => {
      gathered.push(chunk);
      size += chunk.length;
      if (size <= GATHERED_BODY_BYTES) return;
      req.off('data', gather).off('end', whole).off('error', unreachable);
      req.pause();
      for (const part of gathered) upstream.write(part);
      pipeline(req, upstream, unreachable);
    };
    const whole = (): void => {
      req.off('error', unreachable);
      upstream.end(Buffer.concat(gathered));
    };
    // The head goes at once: a client that sent `Expect: 100-continue` waits for the node's answer
    // to it before it sends a byte of the body.
    upstream.on('error', unreachable);
    upstream.flushHeaders();
    req.on('data', gather).once('end', whole).once('error', unreachable);
  };

  const server = createServer({ keepAliveTimeout: 5_000 }, forward);
  // Expectations go to the node, which answers them (100 Continue through `continue` above, or 417).
  server.on('checkContinue', forward);
  server.on('checkExpectation', forward);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    route(to) {
      for (const n of nodes) n.agent.destroy();
      nodes = to.map((n) => ({ host: n.host, port: n.port, agent: new Agent({ keepAlive: true }), count: 0 }));
    },
    forwarded: () => nodes.map((n) => n.count),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      for (const n of nodes) n.agent.destroy();
    },
  };
}
