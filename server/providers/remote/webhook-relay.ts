import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../../logger.ts';
import { describePostgres, reason } from '../../storage/pg/migrate.ts';
import type { Sql } from '../../storage/sql/types.ts';
import { REMOTE_PROVIDER_IDS } from './contract.ts';
import type { JobStatus, RemoteProviderId } from './contract.ts';
import type { WebhookHub } from './webhooks.ts';

/**
 * Provider webhooks across the nodes on one PostgreSQL database. A provider delivers to whichever
 * node its load balancer picks, while the runner waiting on that job may be on another node; each
 * node's WebhookHub only knows its own waits. So a verified delivery that no local runner waits on
 * is NOTIFYed on CHANNEL, and every node LISTENs there on a connection of its own and hands what it
 * hears to its hub (which keeps a delivery nobody waits on yet for a moment, as it does for its own).
 *
 * Decided over a table polled by every node: NOTIFY reaches the waiting node within milliseconds
 * and costs nothing while no webhook arrives; a notification lost while a node is disconnected is
 * covered by the runner's safety poll, and the node polls every job it waits on once it listens
 * again. The LISTEN connection is a plain `pg` client beside the pool, to `serve --listen-database`
 * (default: the database's URL): LISTEN needs a session, which a transaction-mode pooler such as
 * PgBouncer does not keep, so behind one the pool goes through it and this connection does not.
 *
 * The payload says which job (provider id and the provider's job id), and a progress status at
 * most: never a key, and never a final status, whose outputs may be signed URLs or carry a
 * provider's key in their headers (Google) and whose error is no JSON. The waiting node learns the
 * outcome by polling the provider at once.
 */
export const WEBHOOK_CHANNEL = 'clipdesk_provider_webhooks';

/** PostgreSQL refuses payloads of 8000 bytes or more; ours are a few dozen. */
const MAX_PAYLOAD = 7_900;

/**
 * Reconnecting after a lost LISTEN connection: first wait, doubled up to the last. Short: while it
 * is lost, this node's claims on provider jobs look abandoned to the others (job-claims.ts).
 */
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 5_000;

interface Notice {
  /** The node that sent it (it has delivered to its own hub already). */
  from: string;
  provider: RemoteProviderId;
  jobId: string;
  status?: JobStatus;
}

export interface WebhookRelay {
  /** Tells the other nodes about a verified delivery this node has no runner waiting on. */
  forward(provider: RemoteProviderId, jobId: string, status?: JobStatus): Promise<void>;
  /** Stops listening (the SIGTERM path), before the pool closes. */
  close(): Promise<void>;
}

export interface WebhookRelayOptions {
  url: string;
  /** The pool NOTIFY goes through. */
  db: Sql;
  hub: WebhookHub;
  logger: Logger;
  /** The connection's `application_name`: the node's id, by which other nodes see it alive (job-claims.ts). */
  applicationName?: string;
}

/**
 * Starts listening (resolving once the first LISTEN succeeded or failed: a failure is logged and
 * retried, the safety poll covering the gap) and returns the relay.
 */
export async function startWebhookRelay(options: WebhookRelayOptions): Promise<WebhookRelay> {
  const { url, db, hub, logger, applicationName } = options;
  const node = randomUUID();
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = RECONNECT_FIRST_MS;
  let retry: NodeJS.Timeout | undefined;
  let lost = false;
  let warnedPooler = false;

  const onNotice = (message: pg.Notification): void => {
    if (message.channel !== WEBHOOK_CHANNEL || message.payload === undefined) return;
    const notice = parseNotice(message.payload);
    if (!notice || notice.from === node) return;
    hub.deliver(notice.provider, notice.jobId, notice.status);
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 10_000,
      // A connection that died silently (a dropped network path) is noticed by TCP keepalive.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let dropped = false;
    const drop = (why: string) => {
      if (dropped) return;
      dropped = true;
      next.off('notification', onNotice);
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      if (closed) return;
      if (!lost)
        logger.warn(`provider webhooks from other nodes: the LISTEN connection was lost (${why}); reconnecting`);
      lost = true;
      schedule();
    };
    next.on('error', (error: Error) => drop(reason(error, url)));
    next.on('end', () => drop('closed by the server'));
    next.on('notification', onNotice);
    try {
      await next.connect();
      // The node's id goes on this session only when it is PostgreSQL's own (the pid it announced
      // is the one serving it): behind a pooler the name would stay on a server connection that
      // another client uses next, or leave with it, and other nodes would think this one alive
      // after it died, or dead while it runs (job-claims.ts). Without it, its claims hold until
      // their lease lapses.
      const { rows } = await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const direct = rows[0]?.pid === (next as unknown as { processID: number | null }).processID;
      if (direct && applicationName !== undefined)
        await next.query("SELECT set_config('application_name', $1, false)", [applicationName]);
      if (!direct && !warnedPooler) {
        warnedPooler = true;
        logger.warn(
          `provider webhooks from other nodes: the LISTEN connection to ${describePostgres(url)} goes through a pooler: ` +
            'in transaction mode it hears nothing (deliveries then wait for the safety poll), and other nodes cannot ' +
            "see this node alive (its provider-job claims hold until their lease lapses); give --listen-database PostgreSQL's own address",
        );
      }
      await next.query(`LISTEN ${WEBHOOK_CHANNEL}`);
    } catch (error) {
      drop(reason(error, url));
      return;
    }
    if (closed || dropped) {
      if (!dropped) await next.end().catch(() => undefined);
      return;
    }
    client = next;
    retryMs = RECONNECT_FIRST_MS;
    if (lost) {
      lost = false;
      logger.info('provider webhooks from other nodes: listening again');
      // Deliveries sent while this node was not listening are gone: its runners ask their providers now.
      hub.wakeAll();
    }
  };

  const schedule = (): void => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, RECONNECT_MAX_MS);
  };

  await connect();

  return {
    async forward(provider, jobId, status) {
      const notice: Notice = { from: node, provider, jobId };
      const progress = progressStatus(status);
      let payload = JSON.stringify(progress ? { ...notice, status: progress } : notice);
      if (payload.length > MAX_PAYLOAD) payload = JSON.stringify(notice);
      // A job id that long (it is the provider's) cannot be relayed: its runner's safety poll finds it.
      if (payload.length > MAX_PAYLOAD) return;
      await db.get('SELECT pg_notify(?, ?)', WEBHOOK_CHANNEL, payload);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      retry = undefined;
      const open = client;
      client = undefined;
      if (open) {
        open.off('notification', onNotice);
        await open.end().catch(() => undefined);
      }
    },
  };
}

/** A notification as sent by forward(); anything else (another program on the channel) is ignored. */
function parseNotice(payload: string): Notice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { from, provider, jobId, status } = value as Record<string, unknown>;
  if (typeof from !== 'string' || typeof jobId !== 'string') return undefined;
  if (!(REMOTE_PROVIDER_IDS as readonly unknown[]).includes(provider)) return undefined;
  const progress = progressStatus(status);
  return { from, provider: provider as RemoteProviderId, jobId, ...(progress ? { status: progress } : {}) };
}

/** A queued or running status with its numbers, rebuilt field by field; anything else is dropped (the runner polls). */
function progressStatus(status: unknown): JobStatus | undefined {
  if (typeof status !== 'object' || status === null) return undefined;
  const { status: kind, position, progress, retryAfterSeconds } = status as Record<string, unknown>;
  const numbers = { position, progress, retryAfterSeconds };
  const kept: Record<string, number> = {};
  for (const [name, v] of Object.entries(numbers)) {
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    kept[name] = v;
  }
  if (kind === 'queued') return { status: 'queued', ...kept };
  if (kind === 'running') return { status: 'running', ...kept };
  return undefined;
}
