import { randomBytes } from 'node:crypto';
import type { Generation, GenerationResponse, GenerationStatus } from '../../shared/api/index.ts';
import { GENERATION_STATUSES, GenerationPlan } from '../../shared/api/index.ts';
import { FINAL_GENERATION_STATUSES } from '../../shared/api/index.ts';
import type { Db } from './db.ts';

export type GenerationOperation = Generation['operation'];

/** A row of `generations` (db.ts, version 5). */
export interface GenerationRow {
  id: string;
  user_id: string;
  key_id: string;
  operation: GenerationOperation;
  status: GenerationStatus;
  /** The request body as it came (JSON): what an Idempotency-Key's repeat is compared with. */
  request: string;
  /**
   * The generation's plan (GenerationPlan, JSON), made when the request came in: what a restart or
   * a takeover runs. NULL for rows stored before schema version 14 (SQLite) / 16 (PostgreSQL), and
   * for a row that only answers with a synchronous request's result.
   */
  plan: string | null;
  idempotency_key: string | null;
  idempotency_fingerprint: string | null;
  webhook_url: string | null;
  queue_position: number | null;
  progress: number | null;
  /** The synchronous answer's body (JSON), on success. */
  result: string | null;
  /** `{type, message}` (JSON), on failure. */
  error: string | null;
  /** 1: made by a synchronous request (PostgreSQL, sync-generation.ts), which GET /generations does not list. */
  synchronous: number;
  created_at: number;
  updated_at: number;
}

export function newGenerationId(): string {
  return `gen_${randomBytes(12).toString('hex')}`;
}

/** The plan the row stores; undefined for a row stored before plans were (it is planned from `request`). */
export function storedPlan(row: Pick<GenerationRow, 'plan'>): GenerationPlan | undefined {
  return row.plan === null ? undefined : GenerationPlan.parse(JSON.parse(row.plan));
}

export function isFinal(status: GenerationStatus): boolean {
  return FINAL_GENERATION_STATUSES.includes(status);
}

export async function insertGeneration(
  db: Db,
  g: Pick<GenerationRow, 'id' | 'user_id' | 'key_id' | 'operation' | 'request' | 'webhook_url' | 'created_at'> & {
    /** The plan it runs (none for a row that only answers with a synchronous request's result). */
    plan?: GenerationPlan;
    idempotency?: { key: string; fingerprint: string };
    synchronous?: boolean;
  },
): Promise<boolean> {
  // An Idempotency-Key another request stored meanwhile (generations_idempotency) inserts nothing:
  // false, and the caller follows that generation.
  const inserted = await db.run(
    `INSERT INTO generations (id, user_id, key_id, operation, status, request, plan, idempotency_key,
       idempotency_fingerprint, webhook_url, created_at, updated_at, synchronous)
       VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    g.id,
    g.user_id,
    g.key_id,
    g.operation,
    g.request,
    g.plan !== undefined ? JSON.stringify(g.plan) : null,
    g.idempotency?.key ?? null,
    g.idempotency?.fingerprint ?? null,
    g.webhook_url,
    g.created_at,
    g.created_at,
    g.synchronous === true ? 1 : 0,
  );
  return Number(inserted.changes) > 0;
}

/**
 * Lets a generation's Idempotency-Key be used again: a synchronous request that failed (or was
 * canceled) may be retried with its key, and a result older than the idempotency window no longer
 * answers it. False when the row no longer qualifies (another request took it meanwhile).
 */
export async function releaseIdempotencyKey(db: Db, id: string, madeBy: number): Promise<boolean> {
  const changed = await db.run(
    `UPDATE generations SET idempotency_key = NULL
       WHERE id = ? AND (status IN ('failed', 'canceled') OR (status = 'succeeded' AND created_at <= ?))`,
    id,
    madeBy,
  );
  return Number(changed.changes) > 0;
}

export async function getGeneration(db: Db, id: string): Promise<GenerationRow | undefined> {
  return await db.get<GenerationRow>('SELECT * FROM generations WHERE id = ?', id);
}

export async function generationByIdempotencyKey(
  db: Db,
  user: string,
  key: string,
): Promise<GenerationRow | undefined> {
  return await db.get<GenerationRow>('SELECT * FROM generations WHERE user_id = ? AND idempotency_key = ?', user, key);
}

/**
 * An attempt of the generation queue (PostgreSQL) takes the row: it writes itself as the row's
 * lease owner, the newest attempt winning, so that an older attempt's commit finds the row another's
 * and refuses (async-generation.ts). False when the row is final or gone (nothing to run).
 */
export async function claimGeneration(db: Db, id: string, attempt: string): Promise<boolean> {
  const claimed = await db.run(
    `UPDATE generations SET lease_owner = ? WHERE id = ? AND status NOT IN ('succeeded', 'failed', 'canceled')`,
    attempt,
    id,
  );
  return Number(claimed.changes) > 0;
}

/**
 * A step or the provider's queue position / progress. Never moves a final generation (a cancel
 * that raced the worker wins).
 */
export async function updateGenerationStep(
  db: Db,
  id: string,
  status: GenerationStatus,
  now: number,
  report: { queuePosition?: number; progress?: number } = {},
): Promise<void> {
  // The open steps up to this one: the row may be at any of them.
  const reachable = GENERATION_STATUSES.slice(0, GENERATION_STATUSES.indexOf(status) + 1).filter((s) => !isFinal(s));
  if (reachable.length === 0) return;
  await db.run(
    // Only a change is written: a provider polled every few seconds mostly reports the same step,
    // and a thousand jobs in flight must not turn into a thousand writes per round. A step never
    // goes back (the second video of a variation transcodes after the first's thumbnail), and a
    // final state is never left.
    `UPDATE generations SET status = ?, queue_position = ?, progress = ?, updated_at = ?
       WHERE id = ? AND status IN (${reachable.map(() => '?').join(', ')})
         AND (status IS DISTINCT FROM ? OR queue_position IS DISTINCT FROM ? OR progress IS DISTINCT FROM ?)`,
    status,
    report.queuePosition ?? null,
    report.progress ?? null,
    now,
    id,
    ...reachable,
    status,
    report.queuePosition ?? null,
    report.progress ?? null,
  );
}

/** Success; runs inside the transaction that commits the items and their charge. */
export async function completeGeneration(db: Db, id: string, body: GenerationResponse, now: number): Promise<void> {
  await db.run(
    `UPDATE generations SET status = 'succeeded', result = ?, error = NULL, queue_position = NULL, progress = NULL,
       updated_at = ? WHERE id = ?`,
    JSON.stringify(body),
    now,
    id,
  );
}

/** Failed or canceled; returns false when the generation had already ended. */
export async function endGeneration(
  db: Db,
  id: string,
  status: 'failed' | 'canceled',
  error: { type: string; message: string },
  now: number,
): Promise<boolean> {
  const changed = await db.run(
    `UPDATE generations SET status = ?, error = ?, queue_position = NULL, progress = NULL, updated_at = ?
       WHERE id = ? AND status NOT IN ('succeeded', 'failed', 'canceled')`,
    status,
    JSON.stringify(error),
    now,
    id,
  );
  return Number(changed.changes) > 0;
}

/**
 * Retention of finished generations (server/retention/sweeper.ts): deletes those that ended
 * (succeeded, failed or canceled) at or before `endedBy` and were made at or before `madeBy`, in
 * one statement. A queued or running generation is never deleted, and a final one never opens
 * again, so no run can lose its row. Returns how many went.
 */
export async function deleteFinishedGenerations(db: Db, endedBy: number, madeBy: number): Promise<number> {
  const deleted = await db.run(
    `DELETE FROM generations WHERE status IN ('succeeded', 'failed', 'canceled') AND updated_at <= ? AND created_at <= ?`,
    endedBy,
    madeBy,
  );
  return Number(deleted.changes);
}

/** Generations a previous run left queued or running, oldest first. */
export async function openGenerations(db: Db): Promise<GenerationRow[]> {
  return await db.all<GenerationRow>(
    `SELECT * FROM generations WHERE status NOT IN ('succeeded', 'failed', 'canceled') ORDER BY created_at`,
  );
}

/** An account's asynchronous generations, newest first (a synchronous request answered with its own). */
export async function listGenerations(
  db: Db,
  user: string,
  status: GenerationStatus | undefined,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: GenerationRow[] }> {
  const where = `user_id = ? AND synchronous = 0${status !== undefined ? ' AND status = ?' : ''}`;
  const args = status !== undefined ? [user, status] : [user];
  const total = (await db.get<{ n: number }>(`SELECT count(*) AS n FROM generations WHERE ${where}`, ...args))!.n;
  const rows = await db.all<GenerationRow>(
    `SELECT * FROM generations WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
    ...args,
    limit,
    offset,
  );
  return { total, rows };
}

/** The wire shape (shared/api/generations.ts). */
export function toGeneration(row: GenerationRow): Generation {
  const result = row.result !== null ? (JSON.parse(row.result) as GenerationResponse) : undefined;
  return {
    id: row.id,
    object: 'generation',
    operation: row.operation,
    status: row.status,
    ...(row.queue_position !== null ? { queuePosition: row.queue_position } : {}),
    ...(row.progress !== null ? { progress: row.progress } : {}),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    ...(result ? { data: result.data, price: result.price, stats: result.stats } : {}),
    ...(row.error !== null ? { error: JSON.parse(row.error) as { type: string; message: string } } : {}),
    ...(row.webhook_url !== null ? { webhookUrl: row.webhook_url } : {}),
  };
}
