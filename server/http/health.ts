import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Probe, RequestContext } from './router.ts';
import { READY_RETRY_AFTER_SECONDS, sendJson } from './respond.ts';

/**
 * Health probes for load balancers and orchestrators, outside /v1 (they are not part of the API),
 * without a key and not rate limited:
 *
 * - `GET /healthz` (liveness): 200 `{"status":"ok"}` while the process serves HTTP at all.
 * - `GET /readyz` (readiness): 200 `{"status":"ready"}` when a trivial query on the database
 *   answers, a file can be written and removed in the work directory, the blob store answers and
 *   (PostgreSQL) the generation queue's tables answer; otherwise, and from
 *   the moment a graceful shutdown starts (so that traffic drains away), 503
 *   `{"status":"unavailable"}` with `Retry-After`.
 *
 * Bodies never carry errors, paths or versions: anyone who can reach the port can call these.
 * What failed goes to the log, once per change.
 */
export interface ReadinessChecks {
  /** A trivial query; throws when the database cannot answer. */
  database(): void | Promise<void>;
  /** A directory the service writes its work files in. */
  storageDir: string;
  /** The blob store where files are kept (a bucket: it exists and the credentials reach it). */
  storage?(): Promise<void>;
  /** The generation queue (PostgreSQL: pg-boss's tables, through its own pool). */
  queue?(): Promise<void>;
  /** True once the service is shutting down. */
  draining(): boolean;
  logger: { info(message: string): void; warn(message: string): void };
  /** How long a check may take before it counts as failed. Default 2 000. */
  timeoutMs?: number;
}

export function healthProbes(checks: ReadinessChecks): Probe[] {
  let lastProblem: string | null = null;
  const timeoutMs = checks.timeoutMs ?? 2_000;

  const problem = async (): Promise<string | null> => {
    if (checks.draining()) return 'shutting down';
    try {
      await checks.database();
    } catch (error) {
      return `database check failed: ${messageOf(error)}`;
    }
    const probeFile = join(checks.storageDir, `.ready-${randomBytes(6).toString('hex')}`);
    try {
      await withTimeout(writeFile(probeFile, 'ready', { flag: 'wx' }), timeoutMs, 'writing took too long');
    } catch (error) {
      return `storage directory is not writable: ${messageOf(error)}`;
    } finally {
      await rm(probeFile, { force: true }).catch(() => undefined);
    }
    try {
      await checks.storage?.();
    } catch (error) {
      return `file storage check failed: ${messageOf(error)}`;
    }
    try {
      await checks.queue?.();
    } catch (error) {
      return `generation queue check failed: ${messageOf(error)}`;
    }
    return null;
  };

  return [
    {
      path: '/healthz',
      handle: (rc: RequestContext) => sendJson(rc.res, 200, { status: 'ok' }),
    },
    {
      path: '/readyz',
      handle: async (rc: RequestContext) => {
        const found = await withTimeout(problem(), timeoutMs, 'checks took too long').catch(
          (error: unknown) => `readiness ${messageOf(error)}`,
        );
        if (found !== lastProblem) {
          if (found === null) checks.logger.info('ready again');
          else checks.logger.warn(`not ready: ${found}`);
          lastProblem = found;
        }
        if (found === null) sendJson(rc.res, 200, { status: 'ready' });
        else sendJson(rc.res, 503, { status: 'unavailable' }, { 'retry-after': String(READY_RETRY_AFTER_SECONDS) });
      },
    },
  ];
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
