import { randomBytes } from 'node:crypto';
import type {
  Generation,
  WebhookDelivery,
  WebhookDeliveryState,
  WebhookEvent,
  WebhookEventType,
} from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';
import { INSERTION_ORDER, inJsonArray } from '../storage/sql/dialect.ts';

/** The `webhook_deliveries` table (migration 6): one row per event and target, kept across retries. */
export interface DeliveryRow {
  id: string;
  key_id: string;
  user_id: string;
  generation_id: string;
  event_type: WebhookEventType;
  url: string;
  payload: string;
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  state: WebhookDeliveryState;
  created_at: number;
  updated_at: number;
}

const EVENT_TYPES: Partial<Record<Generation['status'], WebhookEventType>> = {
  succeeded: 'generation.succeeded',
  failed: 'generation.failed',
  canceled: 'generation.canceled',
};

/** Standard Webhooks message ids look like `msg_…`; this one is also the delivery's id. */
function newDeliveryId(): string {
  return `msg_${randomBytes(12).toString('hex')}`;
}

/**
 * Records a delivery of a final generation, due at once; null when the generation is not final or
 * the key does not exist. Written before anything is sent, so a crash at any point after this
 * leaves a pending row that the next start delivers (at least once).
 */
export async function recordDelivery(
  db: Db,
  now: number,
  generation: Generation,
  target: { url: string; keyId: string },
): Promise<DeliveryRow | null> {
  const type = EVENT_TYPES[generation.status];
  if (type === undefined) return null;
  const key = await db.get<{ user_id: string }>('SELECT user_id FROM api_keys WHERE id = ?', target.keyId);
  if (!key) return null;
  const event: WebhookEvent = { type, timestamp: new Date(now).toISOString(), data: generation };
  const row: DeliveryRow = {
    id: newDeliveryId(),
    key_id: target.keyId,
    user_id: key.user_id,
    generation_id: generation.id,
    event_type: type,
    url: target.url,
    payload: JSON.stringify(event),
    attempts: 0,
    next_attempt_at: now,
    last_status: null,
    last_error: null,
    state: 'pending',
    created_at: now,
    updated_at: now,
  };
  await db.run(
    `INSERT INTO webhook_deliveries (id, key_id, user_id, generation_id, event_type, url, payload, attempts,
       next_attempt_at, state, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, 'pending', ?, ?)`,
    row.id,
    row.key_id,
    row.user_id,
    row.generation_id,
    type,
    row.url,
    row.payload,
    now,
    now,
    now,
  );
  return row;
}

/** Pending deliveries due by `now`, oldest due first, leaving out `skip` (attempts in flight). */
export async function dueDeliveries(
  db: Db,
  now: number,
  skip: readonly string[],
  limit: number,
): Promise<DeliveryRow[]> {
  return await db.all<DeliveryRow>(
    `SELECT * FROM webhook_deliveries
     WHERE state = 'pending' AND next_attempt_at <= ? AND NOT ${inJsonArray(db.dialect, 'id')}
     ORDER BY next_attempt_at LIMIT ?`,
    now,
    JSON.stringify(skip),
    limit,
  );
}

/** When the next pending delivery (not in `skip`) is due; null when none is pending. */
export async function nextDueAt(db: Db, skip: readonly string[]): Promise<number | null> {
  const row = await db.get<{ at: number | null }>(
    `SELECT min(next_attempt_at) AS at FROM webhook_deliveries
     WHERE state = 'pending' AND NOT ${inJsonArray(db.dialect, 'id')}`,
    JSON.stringify(skip),
  );
  return row?.at ?? null;
}

/**
 * Moves a delivery's next attempt to `at` before it is made: if the process dies mid-attempt, the
 * next start tries again once that time has passed (at least once).
 */
export async function leaseDelivery(db: Db, id: string, at: number): Promise<void> {
  await db.run(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND state = 'pending'`, at, id);
}

export interface AttemptOutcome {
  attempts: number;
  state: WebhookDeliveryState;
  nextAttemptAt: number | null;
  status: number | null;
  error: string | null;
}

export async function saveAttempt(db: Db, id: string, now: number, o: AttemptOutcome): Promise<void> {
  await db.run(
    `UPDATE webhook_deliveries SET attempts = ?, state = ?, next_attempt_at = ?, last_status = ?, last_error = ?,
       updated_at = ? WHERE id = ?`,
    o.attempts,
    o.state,
    o.nextAttemptAt,
    o.status,
    o.error,
    now,
    id,
  );
}

/** A key's deliveries, newest first, one page of them. */
export async function listDeliveries(
  db: Db,
  keyId: string,
  q: { limit: number; page: number; state?: WebhookDeliveryState },
): Promise<{ total: number; deliveries: WebhookDelivery[] }> {
  const where = q.state === undefined ? 'key_id = ?' : 'key_id = ? AND state = ?';
  const args = q.state === undefined ? [keyId] : [keyId, q.state];
  const total = (await db.get<{ n: number }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${where}`, ...args))!
    .n;
  const rows = await db.all<DeliveryRow>(
    `SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, ${INSERTION_ORDER} DESC LIMIT ? OFFSET ?`,
    ...args,
    q.limit,
    q.page * q.limit,
  );
  return { total, deliveries: rows.map(toDelivery) };
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    object: 'webhook_delivery',
    type: r.event_type,
    generationId: r.generation_id,
    url: r.url,
    state: r.state,
    attempts: r.attempts,
    lastStatus: r.last_status,
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at === null || r.state !== 'pending' ? null : iso(r.next_attempt_at),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

/** Deletes delivered and failed deliveries last updated before `before`; returns how many. */
export async function pruneDeliveries(db: Db, before: number): Promise<number> {
  return Number(
    (await db.run(`DELETE FROM webhook_deliveries WHERE state != 'pending' AND updated_at < ?`, before)).changes,
  );
}
