import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { Pool } from 'undici';
import { PageQuery, VideoGenerationRequest } from '../shared/api/index.ts';
import { ProviderSettings } from '../server/providers/provider-keys.ts';
import { Catalog } from '../server/catalog/catalog.ts';
import type { ServiceContext } from '../server/context.ts';
import { silentLogger } from '../server/logger.ts';
import { parseOrThrow } from '../server/errors.ts';
import { readJsonBody } from '../server/http/body.ts';
import type { Route } from '../server/http/router.ts';
import { createRequestHandler, json } from '../server/http/router.ts';
import { createLocalProviders, MODELS } from '../server/providers/index.ts';
import { percentile, reportFigure } from './support/report.ts';

/**
 * Should the service's HTTP layer become Fastify with its zod type provider (docs/benchmarks.md)? The same
 * three handlers (a paged catalog list with a validated query, a JSON body parsed and validated
 * against the v1 generation schema, and a 404) behind the service's own node:http router and
 * behind Fastify, with the same zod schemas and the same JSON out. Auth, limits and SQL are the
 * same work under either framework, so they are left out: this measures what the framework adds.
 * The ratio is ours over Fastify's: ≥ 1 means the current router is at least as fast.
 */
const REQUESTS = 6_000;
const ROUNDS = 4;
const CONNECTIONS = 8;

const catalog = new Catalog({
  models: MODELS,
  local: createLocalProviders(),
  remote: [],
  failing: new Set(),
  settings: new ProviderSettings({ env: {} }),
});
function listModels(q: PageQuery) {
  const start = q.page * q.limit;
  const models = catalog.models.slice(start, start + q.limit).map((m) => catalog.modelRecord(m));
  return { success: true, result: { total: catalog.models.length, models } };
}
function accept(body: VideoGenerationRequest) {
  return { success: true, data: [{ model: body.model, prompt: body.prompt, size: body.size ?? '1080p' }] };
}

function ours(): Server {
  const routes: Route[] = [
    {
      method: 'GET',
      path: /^\/models$/,
      public: true,
      handle(rc) {
        const q = parseOrThrow(PageQuery, {
          limit: rc.url.searchParams.get('limit') ?? undefined,
          page: rc.url.searchParams.get('page') ?? undefined,
        });
        json(rc, 200, listModels(q));
      },
    },
    {
      method: 'POST',
      path: /^\/videos\/generations$/,
      public: true,
      async handle(rc) {
        json(rc, 200, accept(parseOrThrow(VideoGenerationRequest, await readJsonBody(rc.req))));
      },
    },
  ];
  // Public routes never reach the context's database or limits; only errors log.
  const ctx = { logger: silentLogger } as unknown as ServiceContext;
  return createServer({ keepAliveTimeout: 5_000 }, createRequestHandler(ctx, routes));
}

async function fastify(): Promise<Server> {
  const app = Fastify({ logger: false, keepAliveTimeout: 5_000 }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler((error: { statusCode?: number; message: string }, _req, reply) => {
    const status = error.statusCode ?? 500;
    void reply.code(status).send({
      success: false,
      message: error.message,
      code: status === 400 ? 'invalid_request_error' : 'internal_error',
    });
  });
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send({ success: false, message: `no endpoint at ${req.url}`, code: 'not_found_error' });
  });
  app.get('/v1/models', { schema: { querystring: PageQuery } }, (req) => listModels(req.query));
  app.post('/v1/videos/generations', { schema: { body: VideoGenerationRequest } }, (req) => accept(req.body));
  await app.ready();
  return app.server;
}

const BODY = JSON.stringify({ model: 'clipdesk/motion', prompt: 'a paper boat on a stormy sea', duration: 4 });

async function load(url: string, requests: number): Promise<{ rps: number; p99: number }> {
  const pool = new Pool(url, { connections: CONNECTIONS });
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < requests) {
        const i = next++;
        const t = performance.now();
        const kind = i % 3;
        const res = await pool.request(
          kind === 0
            ? { method: 'GET', path: '/v1/models?limit=2&page=0' }
            : kind === 1
              ? {
                  method: 'POST',
                  path: '/v1/videos/generations',
                  body: BODY,
                  headers: { 'content-type': 'application/json' },
                }
              : { method: 'GET', path: '/v1/nowhere' },
        );
        await res.body.text();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  return { rps: requests / seconds, p99: percentile(latencies, 99) };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export default async function (): Promise<void> {
  const a = ours();
  const b = await fastify();
  try {
    const oursUrl = await listen(a);
    const theirsUrl = await listen(b);
    await load(oursUrl, 600);
    await load(theirsUrl, 600);
    const o = { rps: 0, p99: Infinity };
    const f = { rps: 0, p99: Infinity };
    // Alternate which goes first, keep each side's best: noise on one side must not decide it.
    for (let round = 0; round < ROUNDS; round++) {
      const order =
        round % 2 === 0
          ? ([
              [o, oursUrl],
              [f, theirsUrl],
            ] as const)
          : ([
              [f, theirsUrl],
              [o, oursUrl],
            ] as const);
      for (const [side, url] of order) {
        const r = await load(url, REQUESTS / ROUNDS);
        side.rps = Math.max(side.rps, r.rps);
        side.p99 = Math.min(side.p99, r.p99);
      }
    }
    reportFigure(
      'service-http-layer-rps',
      o.rps,
      'req/s',
      o.rps / f.rps,
      'Fastify 5 + fastify-type-provider-zod, same handlers',
    );
    reportFigure('service-http-layer-p99', o.p99, 'ms', o.p99 / f.p99, 'Fastify p99');
  } finally {
    await new Promise((r) => a.close(r));
    await new Promise((r) => b.close(r));
  }
}
