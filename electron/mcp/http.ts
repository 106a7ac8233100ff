import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { BodyTooLarge, lingerAfterRefusal, MAX_CALL_BODY_BYTES, readBoundedBody } from '../host/body-limit.ts';

/**
 * `clipdesk mcp --http`: Streamable HTTP on loopback only, at `/mcp`, behind a bearer secret
 * (new each start, or CLIPDESK_MCP_TOKEN). The Host and any Origin must be this loopback origin,
 * so a web page cannot reach it through DNS rebinding (docs/agents.md).
 */
export interface McpHttpHost {
  readonly url: string;
  readonly secret: string;
  close(): Promise<void>;
}

/** The same 4 MB as the app's loopback endpoint. */
const MAX_BODY_BYTES = MAX_CALL_BODY_BYTES;
/** Sessions open at once: each holds an MCP server (about 74 KB); past this a new client is refused. */
export const DEFAULT_MAX_SESSIONS = 64;
/** A session with no request for this long is closed (its client re-initializes, docs/agents.md). */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  lastSeen: number;
}

function sameSecret(given: string, secret: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function spoken(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

export async function startMcpHttp(options: {
  port: number;
  secret?: string;
  newServer: () => McpServer;
  onError: (error: unknown) => void;
  /** Default DEFAULT_MAX_SESSIONS. */
  maxSessions?: number;
  /** Default DEFAULT_SESSION_IDLE_MS. */
  idleMs?: number;
  /** The clock idle time is measured with (tests move it). Default Date.now. */
  now?: () => number;
}): Promise<McpHttpHost> {
  const secret = options.secret ?? randomBytes(32).toString('base64url');
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.idleMs ?? DEFAULT_SESSION_IDLE_MS;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, Session>();
  let opening = 0;
  const closeSession = (id: string, session: Session): void => {
    sessions.delete(id);
    session.server.close().catch((error: unknown) => options.onError(error));
  };
  const expireIdle = (): void => {
    const before = now() - idleMs;
    for (const [id, session] of sessions) if (session.lastSeen <= before) closeSession(id, session);
  };
  // The sweep never keeps the process alive: stopping the server is what ends it.
  const sweep = setInterval(expireIdle, Math.min(idleMs, 60_000));
  sweep.unref();
  let port = 0;
  const origins = (): string[] => [`http://127.0.0.1:${port}`, `http://localhost:${port}`];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host?.toLowerCase();
    const origin = req.headers.origin?.toLowerCase();
    if (!host || !origins().includes(`http://${host}`) || (origin !== undefined && !origins().includes(origin)))
      return refuse(res, 403, 'Forbidden');
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
    if (!token || !sameSecret(token, secret))
      return refuse(res, 401, 'This server needs the bearer secret printed at its start', {
        'www-authenticate': 'Bearer',
      });
    if ((req.url ?? '').split('?')[0] !== '/mcp') return refuse(res, 404, 'Not found: the endpoint is /mcp');

    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known) known.lastSeen = now();
    if (req.method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse((await readBoundedBody(req, MAX_BODY_BYTES)).toString('utf8'));
      } catch (error) {
        if (!(error instanceof BodyTooLarge)) return refuse(res, 400, 'The body must be JSON');
        lingerAfterRefusal(req);
        return refuse(res, 413, error.message, { connection: 'close' });
      }
      if (known) return known.transport.handleRequest(req, res, body);
      if (sessionId !== undefined) return refuse(res, 404, 'Unknown session');
      if (!isInitializeRequest(body)) return refuse(res, 400, 'Start with an initialize request');
      expireIdle();
      // Sessions still initializing count too: concurrent initializes cannot pass the cap together.
      if (sessions.size + opening >= maxSessions)
        return refuse(
          res,
          503,
          `Too many MCP sessions: ${maxSessions} are open. Close one (DELETE /mcp with its mcp-session-id) ` +
            `or wait: a session idle for ${spoken(idleMs)} is closed.`,
          { 'retry-after': '60' },
        );
      const server = options.newServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { transport, server, lastSeen: now() }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      opening += 1;
      try {
        await server.connect(transport);
        return await transport.handleRequest(req, res, body);
      } finally {
        opening -= 1;
      }
    }
    if (!known) return refuse(res, typeof sessionId === 'string' ? 404 : 400, 'Unknown or missing session');
    return known.transport.handleRequest(req, res);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.onError(error);
      if (!res.headersSent) refuse(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    // Loopback only: never an address another machine can reach.
    http.listen(options.port, '127.0.0.1', () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    secret,
    async close() {
      clearInterval(sweep);
      for (const { server } of sessions.values()) await server.close().catch(() => undefined);
      sessions.clear();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
