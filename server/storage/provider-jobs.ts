import { randomBytes } from 'node:crypto';
import type { MediaKind, RoutingMode } from '../../shared/api/index.ts';
import type { Db } from './db.ts';

/**
 * What finishing a remote generation needs after a restart: everything of the request that ends
 * up in its items, its charge and its answer. Never the provider key (that stays in the key store).
 */
export interface ProviderJobPlan {
  user: string;
  keyId: string;
  kind: MediaKind;
  /** `base/model`, and its resolved version. */
  model: string;
  version: string;
  prompt: string;
  size: string;
  width: number;
  height: number;
  /** Seconds (0 for images). */
  duration: number;
  count: number;
  public: boolean;
  routing: RoutingMode;
  ignoredParameters: string[];
  /** USD per item at the catalog price (a provider-reported cost replaces it on success). */
  unitPrice: number;
  /** How long the items are kept (the account's retention when the request came in). */
  retentionMs: number;
  /** Provider attempts that had failed before this one. */
  retries: number;
  setupTime: number;
  /**
   * Which item of the generation the job renders, where each item is a job of its own (remote video
   * variations): a restart polls it as that item, never submitting it again.
   */
  item?: number;
}

/**
 * A provider's accepted job as kept: its id and the JSON state polling and canceling need. The
 * adapters' SubmittedJob (server/providers/remote/contract.ts) fits it; the storage layer reads
 * nothing in it but the id.
 */
export interface StoredProviderJob {
  id: string;
  state: Record<string, unknown>;
}

export interface ProviderJobRow {
  id: string;
  providerId: string;
  job: StoredProviderJob;
  plan: ProviderJobPlan;
  idempotency?: { key: string; fingerprint: string };
  /** Epoch ms (wall clock) when the provider accepted it: the timeout counts from here. */
  submittedAt: number;
  /** The asynchronous generation it belongs to (generations, version 5), if any. */
  generationId?: string;
}

export function newProviderJobId(): string {
  return `pj_${randomBytes(12).toString('hex')}`;
}

/** Written as soon as the provider accepted the job, before waiting on it. */
export async function insertProviderJob(db: Db, row: ProviderJobRow): Promise<void> {
  // A synchronous answer's inline outputs (SubmittedJob.done) are not kept: they can be megabytes
  // of image.
  const { done: _done, ...job } = row.job as StoredProviderJob & { done?: unknown };
  await db.run(
    `INSERT INTO provider_jobs (id, provider_id, provider_job_id, job, plan, user_id, idempotency_key,
       idempotency_fingerprint, status, submitted_at, updated_at, generation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
    row.id,
    row.providerId,
    job.id,
    JSON.stringify(job),
    JSON.stringify(row.plan),
    row.plan.user,
    row.idempotency?.key ?? null,
    row.idempotency?.fingerprint ?? null,
    row.submittedAt,
    row.submittedAt,
    row.generationId ?? null,
  );
}

/**
 * Removed when its items are committed (in that transaction) or when it has failed for good.
 * Whether the row was there: a commit that finds it gone was beaten to the job (finish.ts).
 */
export async function deleteProviderJob(db: Db, id: string): Promise<boolean> {
  return (await db.run('DELETE FROM provider_jobs WHERE id = ?', id)).changes > 0;
}

/**
 * Jobs a previous run of the service left unfinished, oldest first; with `generationId`, that
 * generation's only (a node taking it over from the queue).
 */
export async function unfinishedProviderJobs(db: Db, generationId?: string): Promise<ProviderJobRow[]> {
  const rows = await db.all<{
    id: string;
    provider_id: string;
    job: string;
    plan: string;
    idempotency_key: string | null;
    idempotency_fingerprint: string | null;
    submitted_at: number;
    generation_id: string | null;
  }>(
    `SELECT id, provider_id, job, plan, idempotency_key, idempotency_fingerprint, submitted_at, generation_id
       FROM provider_jobs WHERE status = 'running'${generationId !== undefined ? ' AND generation_id = ?' : ''}
       ORDER BY submitted_at`,
    ...(generationId !== undefined ? [generationId] : []),
  );
  return rows.map((r) => ({
    id: r.id,
    providerId: r.provider_id,
    job: JSON.parse(r.job) as StoredProviderJob,
    plan: JSON.parse(r.plan) as ProviderJobPlan,
    ...(r.idempotency_key !== null && r.idempotency_fingerprint !== null
      ? { idempotency: { key: r.idempotency_key, fingerprint: r.idempotency_fingerprint } }
      : {}),
    submittedAt: r.submitted_at,
    ...(r.generation_id !== null ? { generationId: r.generation_id } : {}),
  }));
}
