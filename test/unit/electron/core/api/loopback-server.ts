// A purpose-built loopback server for faults our engine cannot produce (resets, slow bodies, odd
// headers). Each test scripts the answers; every request received is recorded.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse, IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface LoopbackServer {
  origin: string;
  requests: Recorded[];
  /** Answers are used in order; the last one repeats. */
  script(...handlers: Handler[]): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(): Promise<LoopbackServer> {
  const requests: Recorded[] = [];
  let handlers: Handler[] = [];
  let index = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const handler = handlers[Math.min(index++, handlers.length - 1)];
      if (handler) handler(req, res, body);
      else json(404, { success: false, message: 'no handler', code: 'not_found_error' })(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    script(...h) {
      handlers = h;
      index = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Drops the connection without an answer (what a crashed server or a cut cable looks like). */
export const reset: Handler = (req) => {
  req.socket.destroy();
};

/** Never answers. */
export const hang: Handler = () => undefined;

export const emptyPage = { success: true, result: { total: 0, medias: [] } };

export const generation = {
  success: true,
  data: [
    {
      id: 'med_1',
      url: 'http://127.0.0.1:1/media/med_1.mp4',
      mime: 'video/mp4',
      user: 'u1',
      media: 'video',
      model: 'local/m',
      provider: 'p',
      prompt: 'x',
      size: '360p',
      duration: 2,
      createdAt: '2026-01-01T00:00:00.000Z',
    },
  ],
  price: 0.2,
  stats: { setupTime: 0, processingTime: 0, generationTime: 1, retries: 0, providerId: 'p' },
};
