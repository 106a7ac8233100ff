import { createHmac } from 'node:crypto';
import type { Agent } from 'undici';
import { request } from 'undici';
import type { Generation } from '../../shared/api/index.ts';
import type { Logger } from '../logger.ts';
import type { Db } from '../storage/db.ts';
import type { DeliveryRow } from './deliveries.ts';
import { dueDeliveries, leaseDelivery, nextDueAt, pruneDeliveries, recordDelivery, saveAttempt } from './deliveries.ts';
import type { WebhookSecrets } from './secrets.ts';
import { webhookSecretBytes } from './secrets.ts';
import type { WebhookTargetPolicy } from './target.ts';
import { RefusedAddressError, deliveryAgent, parseWebhookUrl } from './target.ts';

/** Delivery timings; tests shorten them, the defaults suit real receivers. */
export interface WebhookTimings {
  /** One attempt (connect, send, response headers) gives up after this long. Default 10 000. */
  attemptTimeoutMs?: number;
  /** The wait after the first failure; it doubles after each further one. Default 5 000. */
  initialBackoffMs?: number;
  /** The longest wait between attempts. Default 3 600 000 (1 h). */
  maxBackoffMs?: number;
  /** No attempt is made later than this after the event; the delivery is then failed. Default 24 h. */
  maxAgeMs?: number;
  /** Attempts in flight at once, over all receivers. Default 16. */
  concurrency?: number;
  /** Delivered and failed deliveries are deleted this long after their last attempt. Default 30 days. */
  keepFinishedMs?: number;
}

export const DEFAULT_WEBHOOK_TIMINGS: Required<WebhookTimings> = {
  attemptTimeoutMs: 10_000,
  initialBackoffMs: 5_000,
  maxBackoffMs: 3_600_000,
  maxAgeMs: 86_400_000,
  concurrency: 16,
  keepFinishedMs: 30 * 86_400_000,
};

export interface WebhookDispatcherOptions {
  db: Db;
  secrets: WebhookSecrets;
  policy: WebhookTargetPolicy;
  logger: Logger;
  timings?: WebhookTimings;
  /**
   * Wall-clock milliseconds. Deliveries wait on real timers, so they read real time even when the
   * service runs on a test's hand-moved clock (which would never make a retry due).
   */
  now?: () => number;
}

const MAX_TIMER_MS = 2_147_483_647;
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Outgoing webhooks (Standard Webhooks): every delivery is a row of `webhook_deliveries` first,
 * then attempts. Attempts run concurrently up to `concurrency`, each bounded by its timeout, so a
 * receiver that hangs holds one slot for at most that long and never the others. Failures are
 * retried with exponential backoff and jitter until `maxAgeMs` after the event. Rows left pending
 * by a previous run (stopped or crashed) are delivered on start.
 */
export class WebhookDispatcher {
  private readonly db: Db;
  private readonly secrets: WebhookSecrets;
  private readonly policy: WebhookTargetPolicy;
  private readonly logger: Logger;
  private readonly timings: Required<WebhookTimings>;
  private readonly now: () => number;
  private readonly agent: Agent;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  /** The fill running now, if any; `refill` asks it to look again when it ends (rows may have come meanwhile). */
  private filling: Promise<void> | null = null;
  private refill = false;
  private pruning: Promise<void> | null = null;

  constructor(o: WebhookDispatcherOptions) {
    this.db = o.db;
    this.secrets = o.secrets;
    this.policy = o.policy;
    this.logger = o.logger;
    const given = Object.fromEntries(Object.entries(o.timings ?? {}).filter(([, v]) => v !== undefined));
    this.timings = { ...DEFAULT_WEBHOOK_TIMINGS, ...given };
    this.now = o.now ?? Date.now;
    this.agent = deliveryAgent(o.policy);
  }

  /** Starts delivering, beginning with what a previous run left pending. */
  start(): void {
    // GET /webhooks/deliveries shows recent deliveries; finished ones do not pile up for ever.
    const prune = () => {
      this.pruning ??= pruneDeliveries(this.db, this.now() - this.timings.keepFinishedMs)
        .then(
          () => undefined,
          (error: unknown) => this.logger.error(`could not prune webhook deliveries: ${describe(error)}`),
        )
        .finally(() => {
          this.pruning = null;
        });
    };
    prune();
    this.pruner = setInterval(prune, PRUNE_EVERY_MS);
    this.pruner.unref();
    this.pump();
  }

  /**
   * ServiceContext.generationFinished: records the delivery (durably, before returning) and starts
   * it. Does nothing without a target or for a generation that is not final.
   */
  async generationFinished(generation: Generation, target: { url: string; keyId: string } | undefined): Promise<void> {
    if (target === undefined) return;
    try {
      const row = await recordDelivery(this.db, this.now(), generation, target);
      if (row === null) {
        this.logger.warn(`no webhook for ${generation.id}: it is not final (${generation.status}) or its key is gone`);
        return;
      }
      this.pump();
    } catch (error) {
      this.logger.error(`could not record the webhook of ${generation.id}: ${describe(error)}`);
    }
  }

  /** Aborts attempts in flight (they stay pending, for the next start) and stops. */
  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.pruner) clearInterval(this.pruner);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.filling;
    await this.pruning;
    await Promise.allSettled([...this.inFlight.values()]);
    await this.agent.close().catch(() => undefined);
  }

  /** Starts every due delivery a slot is free for, then sleeps until the next one is due. Never throws. */
  private pump(): void {
    // One fill at a time, so two never start the same row; a pump during a fill makes it run again.
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = this.fill()
      .catch((error: unknown) => {
        // The database failing (disk full, closed): the rows wait for the next event or start.
        this.logger.error(`webhook deliveries: ${describe(error)}`);
      })
      .finally(() => {
        this.filling = null;
        if (this.refill) {
          this.refill = false;
          this.pump();
        }
      });
  }

  private async fill(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const now = this.now();
    const free = this.timings.concurrency - this.inFlight.size;
    if (free > 0) {
      for (const row of await dueDeliveries(this.db, now, [...this.inFlight.keys()], free)) {
        const attempt = this.attempt(row)
          .catch((error: unknown) => this.logger.error(`webhook ${row.id}: ${describe(error)}`))
          .finally(() => {
            this.inFlight.delete(row.id);
            this.pump();
          });
        this.inFlight.set(row.id, attempt);
      }
    }
    // With every slot taken, the next finishing attempt pumps again; no timer needed.
    if (this.inFlight.size >= this.timings.concurrency) return;
    const next = await nextDueAt(this.db, [...this.inFlight.keys()]);
    if (next === null) return;
    this.timer = setTimeout(() => this.pump(), Math.min(Math.max(0, next - this.now()), MAX_TIMER_MS));
    this.timer.unref();
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    const t = this.timings;
    // A crash mid-attempt leaves the row due again shortly after the attempt would have timed out.
    await leaseDelivery(this.db, row.id, this.now() + t.attemptTimeoutMs + 1_000);
    const attempts = row.attempts + 1;
    let status: number | null = null;
    let error: string | null = null;
    let permanent = false;
    try {
      const url = parseWebhookUrl(row.url, this.policy);
      const secrets = await this.secrets.forSigning(row.key_id, this.now());
      if (secrets === null) throw new PermanentError('the key that asked for this webhook no longer exists');
      const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(t.attemptTimeoutMs)]);
      const response = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Clipdesk-Webhooks/1',
          ...signed(row, secrets, this.now()),
        },
        body: row.payload,
        signal,
        dispatcher: this.agent,
      });
      status = response.statusCode;
      // The answer's body means nothing to us; read it (bounded) so the connection can be reused.
      await response.body.dump({ limit: 64 * 1024, signal }).catch(() => undefined);
      if (status < 200 || status >= 300)
        error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    } catch (caught) {
      if (this.stopping.signal.aborted) {
        // Not the receiver's fault: tried again, at once, on the next start.
        await saveAttempt(this.db, row.id, this.now(), {
          attempts: row.attempts,
          state: 'pending',
          nextAttemptAt: this.now(),
          status: row.last_status,
          error: row.last_error,
        });
        return;
      }
      permanent = caught instanceof PermanentError || isRefusal(caught);
      error = attemptError(caught, t.attemptTimeoutMs);
    }
    const now = this.now();
    if (error === null) {
      await saveAttempt(this.db, row.id, now, {
        attempts,
        state: 'delivered',
        nextAttemptAt: null,
        status,
        error: null,
      });
      return;
    }
    const next = now + backoff(attempts, t);
    if (permanent || next > row.created_at + t.maxAgeMs) {
      await saveAttempt(this.db, row.id, now, { attempts, state: 'failed', nextAttemptAt: null, status, error });
      this.logger.warn(
        `webhook ${row.id} for ${row.generation_id} to ${originOf(row.url)} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${error}`,
      );
      return;
    }
    await saveAttempt(this.db, row.id, now, { attempts, state: 'pending', nextAttemptAt: next, status, error });
  }
}

/**
 * The Standard Webhooks headers: each signature is `v1,` and the base64 HMAC-SHA256, keyed with a
 * secret's decoded bytes, of `id.timestamp.body`; one per secret, space-separated (the scheme's
 * form for several), so a receiver holding either secret verifies during a rotation. The timestamp
 * is the attempt's (receivers refuse old ones), so each attempt is signed anew; the id is the
 * delivery's, the same on every retry.
 */
export function signed(
  row: Pick<DeliveryRow, 'id' | 'payload'>,
  secrets: readonly string[],
  nowMs: number,
): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const signatures = secrets.map(
    (secret) =>
      `v1,${createHmac('sha256', webhookSecretBytes(secret)).update(`${row.id}.${timestamp}.${row.payload}`).digest('base64')}`,
  );
  return { 'webhook-id': row.id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}

/** The wait before attempt `attempts + 1`: doubling from initialBackoffMs, capped, with jitter (50–100 %). */
export function backoff(attempts: number, t: Required<WebhookTimings>, random = Math.random): number {
  const base = Math.min(t.maxBackoffMs, t.initialBackoffMs * 2 ** Math.min(attempts - 1, 40));
  return Math.round(base * (0.5 + random() * 0.5));
}

class PermanentError extends Error {}

/** A refused address is refused again on every retry: no point trying for 24 h. */
function isRefusal(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof RefusedAddressError) return true;
    if ((e as { code?: string }).code === 'invalid_request_error') return true;
  }
  return false;
}

function attemptError(error: unknown, timeoutMs: number): string {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e.name === 'TimeoutError') return `timed out after ${timeoutMs / 1000} s`;
    if (e instanceof RefusedAddressError) return e.message;
  }
  return describe(error);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** The origin only, for logs: a URL's path, query or user info may carry the receiver's own tokens. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}
