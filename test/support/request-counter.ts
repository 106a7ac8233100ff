import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the counter saw it. */
export interface CountedRequest {
  /** `GET /v1/generations/:id`: the method and the path with its ids replaced. */
  route: string;
  /** The service counted it against the rate limits: its answer carried `X-RateLimit-Limit`. */
  counted: boolean;
}

export interface RequestCounter {
  /** The counter's own base URL (`http://127.0.0.1:PORT/v1`): give it to a client instead of the service's. */
  url: string;
  readonly seen: readonly CountedRequest[];
  /** Requests per route since `from` (an index into `seen`): `{ route: [counted, not counted] }`. */
  byRoute(from?: number): Record<string, { counted: number; free: number }>;
  /** How many of the requests since `from` the service counted. */
  counted(from?: number): number;
  close(): Promise<void>;
}

/** Ids in paths (`gen_…`, `med_…`, signed file names) become `:id`, so requests group by route. */
function routeOf(method: string, url: string): string {
  const path = url.split('?')[0] ?? url;
  const parts = path.split('/').map((p, i) => (i > 2 && /[_.]|^[0-9a-f-]{16,}$/i.test(p) ? ':id' : p));
  return `${method} ${parts.join('/')}`;
}

/**
 * A loopback HTTP relay in front of the real service that only records what passes: each request's
 * route, and whether the service counted it (its answer's rate-limit headers). Nothing is changed.
 */
export async function startRequestCounter(serviceUrl: string): Promise<RequestCounter> {
  const target = new URL(serviceUrl);
  const seen: CountedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const upstream = forward(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        seen.push({
          route: routeOf(req.method ?? '?', req.url ?? '/'),
          counted: 'x-ratelimit-limit' in answer.headers,
        });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const since = (from: number) => seen.slice(from);
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/+$/, '')}`,
    seen,
    byRoute(from = 0) {
      const out: Record<string, { counted: number; free: number }> = {};
      for (const r of since(from)) {
        const entry = (out[r.route] ??= { counted: 0, free: 0 });
        if (r.counted) entry.counted++;
        else entry.free++;
      }
      return out;
    },
    counted: (from = 0) => since(from).filter((r) => r.counted).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
