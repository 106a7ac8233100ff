/** Other v1 implementations in front of ours, for behaviour our own service cannot show (tests only). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Another v1 implementation in front of ours that rate-limits polling: it forwards every request to
 * `target` (a service URL ending in /v1) unchanged, except that the first `GET /generations/:id`
 * is answered 429 with `Retry-After`. Our own service never does that (polling one's generations is
 * free of the rate limits), so this is a fault our code cannot produce; a client talking to other
 * implementations must still wait it out and say so.
 */
export async function pollThrottlingProxy(target: string, retryAfterSeconds = 1) {
  let throttled = 0;
  let url = '';
  const server = createServer((req, res) => {
    if (throttled === 0 && req.method === 'GET' && /^\/generations\/gen_/.test(req.url ?? '')) {
      throttled++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds) });
      res.end(
        JSON.stringify({
          success: false,
          error: { type: 'rate_limit_error', message: 'Rate limit of 1 poll per second exceeded' },
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'idempotency-key', 'prefer']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${req.url}`, { method: req.method, headers, body })
        .then(async (r) => {
          const out: Record<string, string> = { 'content-type': r.headers.get('content-type') ?? 'application/json' };
          // The service's own address in Location would take the client past the proxy.
          const location = r.headers.get('location');
          if (location) out['location'] = location.replace(target, url);
          res.writeHead(r.status, out);
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, throttled: () => throttled, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * A service version from before asynchronous mode (docs/workflows.md; the one legitimate stand-in here: the real service has
 * async mode and cannot be made to lack it). It forwards everything to the real service but drops
 * `Prefer`, so every generation is answered synchronously (200), and 404s the async routes.
 */
export async function olderService(target: string) {
  const seen: Array<{ method: string; path: string }> = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '' });
    if (req.url?.startsWith('/generations') || req.url === '/openapi.json') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ success: false, error: { type: 'not_found_error', message: 'Not found' } }));
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'idempotency-key']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      fetch(`${target}${req.url}`, { method: req.method, headers, body })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}
