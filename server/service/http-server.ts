import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceContext } from '../context.ts';
import { healthProbes } from '../http/health.ts';
import { answerClientError, answerUnmetExpectation } from '../http/respond.ts';
import { createRequestHandler } from '../http/router.ts';
import { asyncGenerationRoutes } from '../http/routes/async-generations.ts';
import { catalogRoutes } from '../http/routes/catalog.ts';
import { fileRoutes } from '../http/routes/files.ts';
import { generationRoutes } from '../http/routes/generations.ts';
import { mediaRoutes } from '../http/routes/media.ts';
import { openApiRoutes } from '../http/routes/openapi.ts';
import { providerWebhookRoutes } from '../http/routes/provider-webhooks.ts';
import { routingPreviewRoutes } from '../http/routes/routing-preview.ts';
import { uploadRoutes } from '../http/routes/uploads.ts';
import { usageRoutes } from '../http/routes/usage.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import type { Logger } from '../logger.ts';
import type { BlobStore } from '../storage/blobs/index.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import type { SqlDatabase } from '../storage/sql/types.ts';

/** The listening HTTP server, and what a graceful stop needs of it. */
export interface ServedHttp {
  /** The listening address as URLs show it (a wildcard address as 127.0.0.1). */
  shownHost: string;
  port: number;
  /** From now on /readyz answers 503 and no connection is kept for another request. */
  startDraining: () => void;
  draining: () => boolean;
  /** Requests whose response has not ended. */
  inFlight: () => number;
  /** Stops accepting connections and closes idle ones; resolves once the server has closed. */
  stopListening: () => Promise<void>;
  /** Resolves once every request in flight has been answered, or after `graceMs`; true if all were. */
  answered: (graceMs: number) => Promise<boolean>;
  closeAllConnections: () => void;
}

/** What /readyz and /livez look at (http/health.ts). */
export interface ProbedParts {
  db: SqlDatabase;
  /** A local directory that must be writable. */
  storageDir: string;
  store: Pick<BlobStore, 'check'>;
  queue: GenerationQueue | undefined;
  logger: Logger;
}

/** The API's route table, in the order the router tries it; each route declares whether it is public. */
export const ROUTES = [
  ...uploadRoutes,
  ...catalogRoutes,
  ...generationRoutes,
  ...routingPreviewRoutes,
  ...asyncGenerationRoutes,
  ...mediaRoutes,
  ...usageRoutes,
  ...fileRoutes,
  ...openApiRoutes,
  ...providerWebhookRoutes,
  ...webhookRoutes,
];

/** The API's routes on an HTTP server listening on `host`:`port` (0: a free port). */
export async function serveHttp(
  ctx: ServiceContext,
  probed: ProbedParts,
  at: { host: string; port: number },
): Promise<ServedHttp> {
  const { db, queue } = probed;
  let draining = false;
  const probes = healthProbes({
    database: async () => {
      await db.get('SELECT 1');
    },
    storageDir: probed.storageDir,
    storage: () => probed.store.check(),
    ...(queue ? { queue: () => queue.check() } : {}),
    draining: () => draining,
    logger: probed.logger,
  });
  const handler = createRequestHandler(ctx, ROUTES, probes);
  // Requests whose response has not ended, so that a graceful stop can wait for them.
  const inFlight = new Set<ServerResponse>();
  let allAnswered: (() => void) | null = null;
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (!draining) return;
      // The connection is idle now: while stopping, nothing more is taken on it.
      setImmediate(() => server.closeIdleConnections());
      if (inFlight.size === 0) allAnswered?.();
    });
    if (draining) res.setHeader('connection', 'close');
    handler(req, res);
  });
  // Malformed HTTP and unmet `Expect`s get the error envelope rather than Node's bare status line.
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerUnmetExpectation);
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const shownHost = urlHost === '0.0.0.0' || urlHost === '[::]' ? '127.0.0.1' : urlHost;

  return {
    shownHost,
    port: address.port,
    startDraining: () => {
      draining = true;
    },
    draining: () => draining,
    inFlight: () => inFlight.size,
    stopListening: () => {
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      return stopped;
    },
    answered: (graceMs) =>
      new Promise((resolveAnswered) => {
        if (inFlight.size === 0) return resolveAnswered(true);
        if (graceMs <= 0) return resolveAnswered(false);
        const timeout = setTimeout(() => resolveAnswered(inFlight.size === 0), graceMs);
        allAnswered = () => {
          clearTimeout(timeout);
          resolveAnswered(true);
        };
      }),
    closeAllConnections: () => server.closeAllConnections(),
  };
}
