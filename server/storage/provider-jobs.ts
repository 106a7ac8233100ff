import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { GenerationPlan, MediaKind, RoutingMode } from '../../shared/api/index.ts';
import type { Db } from './db.ts';

/**
 * Who a provider's job runs for and what it is charged: with the plan it runs, what finishing it
 * after a restart needs. Never the provider key (that stays in the key store).
 */
export const ProviderJobTerms = z.object({
  user: z.string(),
  keyId: z.string(),
  /** Request parameters this provider did not receive. */
  ignoredParameters: z.array(z.string()),
  /** USD per item at the catalog price (a provider-reported cost replaces it on success). */
  unitPrice: z.number(),
  /** How long the items are kept (the account's retention when the request came in). */
  retentionMs: z.number(),
  /** Provider attempts that had failed before this one. */
  retries: z.number(),
  setupTime: z.number(),
  /**
   * Which item of the generation the job renders, where each item is a job of its own (remote video
   * variations): a restart polls it as that item, never submitting it again.
   */
  item: z.number().int().nonnegative().optional(),
});
export type ProviderJobTerms = z.infer<typeof ProviderJobTerms>;

/**
 * The `plan` column as rows written before it held the GenerationPlan have it: the terms beside a
 * copy of the plan's fields. Read as a plan of its one provider, so a job a previous version
 * submitted still finishes after an upgrade (and is not paid for twice).
 */
const EarlierPlanFields = z.object({
  kind: MediaKind,
  model: z.string(),
  version: z.string(),
  prompt: z.string(),
  size: z.string(),
  width: z.number(),
  height: z.number(),
  duration: z.number(),
  count: z.number(),
  public: z.boolean(),
  routing: RoutingMode,
});

/** The `plan` column: the job's plan, and its terms beside it. */
function storedJobPlan(providerId: string, text: string): { plan: GenerationPlan; terms: ProviderJobTerms } {
  const json = JSON.parse(text) as unknown;
  if (typeof json === 'object' && json !== null && 'plan' in json)
    return { plan: GenerationPlan.parse(json.plan), terms: ProviderJobTerms.parse(json) };
  // zod keeps only the fields each schema names: the plan's copy, and the terms beside it.
  const terms = ProviderJobTerms.parse(json);
  const candidate = { provider: providerId, ignoredParameters: terms.ignoredParameters };
  return {
    plan: { ...EarlierPlanFields.parse(json), seed: 0, parameters: {}, candidates: [candidate], ranking: [candidate] },
    terms,
  };
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
  /** The plan the job runs (for one item of several: that item's, with its count and seed). */
  plan: GenerationPlan;
  terms: ProviderJobTerms;
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
    JSON.stringify({ ...row.terms, plan: row.plan }),
    row.terms.user,
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
    ...storedJobPlan(r.provider_id, r.plan),
    ...(r.idempotency_key !== null && r.idempotency_fingerprint !== null
      ? { idempotency: { key: r.idempotency_key, fingerprint: r.idempotency_fingerprint } }
      : {}),
    submittedAt: r.submitted_at,
    ...(r.generation_id !== null ? { generationId: r.generation_id } : {}),
  }));
}
