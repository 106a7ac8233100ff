import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, pipeline } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { RPCHandler } from '@orpc/server/node';
import { HTTP_IPC } from '../../shared/ipc/client.ts';
import { rendererCsp } from '../app/csp.ts';
import { serveLocalMedia, type MediaRoots } from '../app/local-media.ts';
import { resolveRendererFile } from '../app/renderer-files.ts';
import { rpcHandlerOptions, type IpcRouter } from '../app/router.ts';
import { CONTENT_LIMITS } from '../../shared/api/index.ts';
import { BodyTooLarge, lingerAfterRefusal, MAX_CALL_BODY_BYTES, readBoundedRequest } from './body-limit.ts';
import { assertLoopback, checkRequest, cookieName } from './guard.ts';

export interface HostOptions {
  router: IpcRouter;
  /** The built renderer (dist/renderer); none: the host serves no pages (the desktop app's endpoint). */
  staticDir?: string;
  /** Where `/local-media/…` is served from; none: no local media. */
  mediaRoots?: MediaRoots;
  /** 0 (default): any free port. */
  port?: number;
  /** 127.0.0.1 (default) or ::1; anything else throws. */
  host?: string;
  /** Default: 32 random bytes, new on every launch. */
  secret?: string;
  /** Largest body of a call (default MAX_CALL_BODY_BYTES, 4 MB); browser mode's file upload gets the upload limit. */
  maxBodyBytes?: number;
}

export interface Host {
  readonly port: number;
  readonly secret: string;
  /** The URL to open: `http://127.0.0.1:PORT/?t=SECRET`. */
  readonly url: string;
  readonly origin: string;
  close(): Promise<void>;
}

const BASE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
} as const;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(JSON.stringify(body));
}

function refuse(res: ServerResponse, status: 401 | 403 | 404 | 405 | 413, message: string): void {
  const code =
    status === 413
      ? 'payload_too_large'
      : status === 401
        ? 'authentication_error'
        : status === 403
          ? 'forbidden'
          : status === 404
            ? 'not_found'
            : 'invalid_input';
  sendJson(res, status, { code, message });
}

/**
 * The 401 a browser tab gets for an old or mistyped link: the same words as the JSON refusal, as a
 * page (a tab shows JSON raw). Nothing on it is loaded from anywhere.
 */
function refusePage(res: ServerResponse, message: string): void {
  res.writeHead(401, {
    ...BASE_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
  });
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Clipdesk: open the link printed at launch</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><h1>Open the link printed at launch</h1>
<p>${message} This link is old or mistyped: each launch of Clipdesk in browser mode prints a new one
(<code>open http://127.0.0.1:…/?t=…</code>) in the terminal that started it. Open that link, or start Clipdesk again.</p>
</body></html>
`);
}

/** A browser navigating to a page (not the renderer's calls, which read JSON). */
function wantsPage(method: string, accept: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && /\btext\/html\b/.test(accept ?? '');
}

function sendWebResponse(res: ServerResponse, response: Response): void {
  const headers: Record<string, string> = { ...BASE_HEADERS };
  response.headers.forEach((value, key) => (headers[key] = value));
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // pipeline destroys both sides on an error either way (a file that fails mid-read, a client
  // that goes away): the response is cut off, and no stream is left with an unhandled 'error'.
  pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), res, () => undefined);
}

/** Static file of the built renderer (see resolveRendererFile for the path rules). */
async function serveStatic(
  staticDir: string,
  rawPath: string,
  method: string,
  res: ServerResponse,
  csp: string,
): Promise<void> {
  const found = await resolveRendererFile(staticDir, rawPath);
  if (!found) return refuse(res, 404, 'Not found');
  res.writeHead(200, {
    ...BASE_HEADERS,
    'content-type': found.type,
    'content-length': String(found.size),
    'cache-control': found.isDocument ? 'no-store' : 'max-age=3600',
    ...(found.isDocument ? { 'content-security-policy': csp } : {}),
  });
  if (method === 'HEAD') {
    res.end();
    return;
  }
  pipeline(createReadStream(found.file), res, () => undefined);
}

/** Browser mode's upload of a dropped file: the largest upload, and its form's headers. */
const UPLOAD_ROUTE = `${HTTP_IPC.rpcPrefix}/uploads/fromBytes`;
const UPLOAD_BODY_BYTES = CONTENT_LIMITS.uploadVideoBytes + 1_000_000;

/**
 * The browser-mode host: the built renderer, the IPC contract over HTTP (`/rpc/<domain>/<action>`,
 * oRPC; event streams over the same connection) and local media (`/local-media/…`), all on
 * loopback behind a per-launch secret. It is also what the end-to-end tests drive. Without a
 * `staticDir` and `mediaRoots` it serves the contract alone: the desktop app's endpoint for
 * `clipdesk mcp` (app-endpoint-host.ts).
 */
export async function startHost(options: HostOptions): Promise<Host> {
  const bindHost = options.host ?? '127.0.0.1';
  assertLoopback(bindHost);
  const secret = options.secret ?? randomBytes(32).toString('base64url');
  const rpc = new RPCHandler(options.router, rpcHandlerOptions(HTTP_IPC.rpcPrefix));
  const csp = rendererCsp([]);
  const maxBodyBytes = options.maxBodyBytes ?? MAX_CALL_BODY_BYTES;
  let port = 0;

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawUrl = req.url ?? '/';
    const method = req.method ?? 'GET';
    const guard = checkRequest(rawUrl, req.headers, { port, secret });
    if (!guard.ok && guard.status === 401 && wantsPage(method, req.headers.accept))
      return refusePage(res, 'This address needs the link printed at launch.');
    if (!guard.ok)
      return refuse(
        res,
        guard.status,
        guard.status === 401 ? 'This address needs the link printed at launch.' : 'Forbidden',
      );
    // Route on the raw path: WHATWG URL parsing would resolve `%2e%2e` before we could refuse it.
    const rawPath = rawUrl.split('?')[0] ?? '/';
    const isRpc = rawPath === HTTP_IPC.rpcPrefix || rawPath.startsWith(`${HTTP_IPC.rpcPrefix}/`);
    const { staticDir, mediaRoots } = options;
    // The desktop app's endpoint serves the contract alone: no pages, no media, no cookie trade.
    if (!isRpc && staticDir === undefined) return refuse(res, 404, 'Not found');
    if (guard.fromQuery && (method === 'GET' || method === 'HEAD') && !rawPath.startsWith(`${HTTP_IPC.rpcPrefix}/`)) {
      // Trade the secret in the URL for an HttpOnly cookie, and drop it from the address bar.
      res.writeHead(303, {
        ...BASE_HEADERS,
        'set-cookie': `${cookieName(port)}=${secret}; HttpOnly; SameSite=Strict; Path=/`,
        location: rawPath,
        'cache-control': 'no-store',
      });
      res.end();
      return;
    }
    if (isRpc) {
      if (method !== 'POST') return refuse(res, 405, 'Routes are called with POST.');
      const limit = staticDir !== undefined && rawPath === UPLOAD_ROUTE ? UPLOAD_BODY_BYTES : maxBodyBytes;
      let call: IncomingMessage;
      try {
        call = await readBoundedRequest(req, limit);
      } catch (error) {
        if (!(error instanceof BodyTooLarge)) throw error;
        lingerAfterRefusal(req);
        res.setHeader('connection', 'close');
        return refuse(res, 413, error.message);
      }
      const { matched } = await rpc.handle(call, res, { prefix: HTTP_IPC.rpcPrefix, context: { transport: 'http' } });
      if (!matched) refuse(res, 404, 'Unknown route');
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') return refuse(res, 405, 'Method not allowed');
    if (rawPath.startsWith(HTTP_IPC.localMediaPrefix)) {
      if (!mediaRoots) return refuse(res, 404, 'Not found');
      const rest = rawPath.slice(HTTP_IPC.localMediaPrefix.length);
      const slash = rest.indexOf('/');
      if (slash <= 0) return refuse(res, 404, 'Not found');
      const range = typeof req.headers.range === 'string' ? req.headers.range : null;
      return sendWebResponse(
        res,
        await serveLocalMedia(mediaRoots, rest.slice(0, slash), rest.slice(slash + 1), method, range),
      );
    }
    return staticDir === undefined ? refuse(res, 404, 'Not found') : serveStatic(staticDir, rawPath, method, res, csp);
  };

  const server: Server = createServer((req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { code: 'internal_error', message: error instanceof Error ? error.message : 'error' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bindHost, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const hostPart = bindHost.includes(':') ? `[${bindHost}]` : bindHost;
  const origin = `http://${hostPart}:${port}`;
  return {
    port,
    secret,
    origin,
    url: `${origin}/?${HTTP_IPC.tokenParam}=${secret}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
