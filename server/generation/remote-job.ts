import { rm, stat } from 'node:fs/promises';
import { CONTENT_LIMITS, tokenCharge } from '../../shared/api/index.ts';
import type { GenerationPlan, GenerationResponse, MediaKind, PricedOffer } from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';
import { ApiError } from '../errors.ts';
import { ProviderError } from '../providers/remote/contract.ts';
import type { AdapterSettings, JobStatus, ProviderTask, SubmittedJob } from '../providers/remote/contract.ts';
import { outputsMayBePrivate } from '../providers/remote/download.ts';
import type { DownloadPolicy } from '../providers/remote/download.ts';
import { runRemoteJob } from '../providers/remote/runner.ts';
import type { RemoteJobResult } from '../providers/remote/runner.ts';
import { webhookUrlFor } from '../providers/remote/runtime.ts';
import type { ProviderOffer, RemoteProvider } from '../providers/types.ts';
import {
  deleteProviderJob,
  insertProviderJob,
  newProviderJobId,
  unfinishedProviderJobs,
} from '../storage/provider-jobs.ts';
import type { ProviderJobRow, ProviderJobTerms } from '../storage/provider-jobs.ts';
import { recordIdempotent } from './idempotency.ts';
import { crashPoint, finishGeneration } from './finish.ts';
import { leftToAnother } from './lease.ts';
import type { StepReport } from './finish.ts';
import type { GenerationScope, GenerationServices } from './services.ts';

/** What the generation loop asks of one remote candidate. */
export interface RemoteAttempt {
  provider: RemoteProvider;
  offer: ProviderOffer;
  /** The request as the provider gets it. */
  task: ProviderTask;
  /** Persisted with the job, so a restart can finish the generation. */
  plan: GenerationPlan;
  terms: ProviderJobTerms;
  idempotency?: { key: string; fingerprint: string };
  workDir: string;
  /** A cancel (asynchronous mode) or the service's lifetime; default the latter. */
  signal?: AbortSignal;
  /** The asynchronous generation this job is for (its provider_jobs row names it). */
  generationId?: string;
  /** Where the generation is: each poll's answer (queue position, progress) is reported as its step. */
  step?: StepReport;
  /** The job a previous run submitted for this request (its provider_jobs row): polled, never submitted again. */
  resume?: ProviderJobRow;
}

/** A remote candidate's outcome: the masters, and the job row the commit must remove (none when not recorded). */
export interface RemoteOutcome extends RemoteJobResult {
  providerJob?: string;
}

/**
 * A finished job with what the provider's own report says it cost (docs/providers.md, "Prices"):
 * the USD it reported, else the tokens it reported priced by the offer's token lines
 * (shared/api/pricing.ts); neither leaves `cost` out and the catalog price applies.
 */
export function withReportedCost(result: RemoteJobResult, offer: PricedOffer | undefined): RemoteJobResult {
  if (result.cost !== undefined || !result.usage || !offer) return result;
  const cost = tokenCharge(offer.prices, result.usage);
  return cost === undefined ? result : { ...result, cost };
}

/**
 * Runs one remote job for a live request: submit, persist the job (with everything needed to
 * finish the generation) before waiting, wait, fetch. When the job fails its row goes; on
 * shutdown it stays, for the next start to resume.
 */
export async function runRemoteAttempt(ctx: GenerationServices, attempt: RemoteAttempt): Promise<RemoteOutcome> {
  const { provider } = attempt;
  const settings = ctx.remote.settings(provider.id);
  if (!settings) throw new ProviderError(provider.id, 'auth', `${provider.name} has no key configured`);
  const { resume } = attempt;
  const rowId = resume?.id ?? newProviderJobId();
  const signal = attempt.signal ?? ctx.shutdown;
  let persisted = resume !== undefined;
  let accepted: SubmittedJob | undefined = resume?.job;
  if (resume) ctx.logger.info(`resuming ${provider.name} job ${resume.job.id} (${resume.plan.model}) after a restart`);
  try {
    const result = await runProviderJob(
      ctx,
      { provider, settings },
      {
        kind: attempt.task.kind,
        count: attempt.task.count,
        webhooks: true,
        ...(resume
          ? { resume: resume.job }
          : {
              task: attempt.task,
              submitted: async (job: SubmittedJob) => {
                accepted = job;
                persisted = await recordJob(ctx, provider, settings.apiKey, rowId, attempt, job);
              },
            }),
        // A resumed job's timeout counts from its submission, across the restart.
        deadline: (resume?.submittedAt ?? Date.now()) + ctx.remote.options.timeoutMs,
        workDir: attempt.workDir,
        signal,
        ...(attempt.step ? { step: attempt.step } : {}),
      },
    );
    return { ...withReportedCost(result, attempt.offer), ...(persisted ? { providerJob: rowId } : {}) };
  } catch (error) {
    // Canceled (not shutting down, not taken over): the provider stops the job too, so it is not paid for.
    if (signal.aborted && !leftToAnother(ctx.shutdown, signal) && accepted) {
      await cancelAtProvider(ctx, { provider, settings }, accepted);
    }
    // Shutting down, or another node's now: the job stays at the provider and in provider_jobs,
    // and resumes (on start, or on the node that took it over).
    if (persisted && !leftToAnother(ctx.shutdown, signal, error)) await deleteProviderJob(ctx.db, rowId);
    if (persisted && error instanceof ProviderError) error.afterSubmit = true;
    throw error;
  }
}

/**
 * Records a job the provider accepted (its provider_jobs row) before any wait; whether it was.
 * Belt and braces over the adapter contract: a key never reaches the database, so a job whose
 * state holds one still runs, but cannot resume after a restart.
 */
async function recordJob(
  ctx: GenerationServices,
  provider: RemoteProvider,
  apiKey: string,
  rowId: string,
  attempt: RemoteAttempt,
  job: SubmittedJob,
): Promise<boolean> {
  if (JSON.stringify({ id: job.id, state: job.state }).includes(apiKey)) {
    ctx.logger.error(`${provider.name}'s adapter put its key into the job state; the job is not persisted`);
    return false;
  }
  const record = (db: Db) =>
    insertProviderJob(db, {
      id: rowId,
      providerId: provider.id,
      job,
      plan: attempt.plan,
      terms: attempt.terms,
      ...(attempt.idempotency ? { idempotency: attempt.idempotency } : {}),
      ...(attempt.generationId !== undefined ? { generationId: attempt.generationId } : {}),
      submittedAt: Date.now(),
    });
  // PostgreSQL: this node's, from the start (another node starting now must not resume it).
  // An asynchronous generation's job is the queue's (its attempt's lease covers it).
  const claims = attempt.generationId === undefined ? ctx.remote.jobClaims : undefined;
  if (claims)
    await ctx.db.transaction(async (tx) => {
      await claims.claimNew(tx, rowId);
      await record(tx);
    });
  else await record(ctx.db);
  ctx.logger.info(`${provider.name} accepted job ${job.id} for ${attempt.plan.model}`);
  crashPoint('submitted');
  return true;
}

/** A remote provider of the catalog with its settings (its key): what a job runs on. */
export interface ConfiguredProvider {
  provider: RemoteProvider;
  settings: AdapterSettings;
}

/** The catalog's remote provider of this id with its settings; undefined when it is not there or has no key. */
export function configuredProvider(ctx: GenerationServices, providerId: string): ConfiguredProvider | undefined {
  const provider = ctx.catalog.providers.find((p): p is RemoteProvider => p.kind === 'remote' && p.id === providerId);
  const settings = provider ? ctx.remote.settings(provider.id) : undefined;
  return provider && settings ? { provider, settings } : undefined;
}

/**
 * One provider job through the runner, the one place runRemoteJob is called: a new one (`task`,
 * handed to `submitted` once accepted) or one a previous run submitted (`resume`: polled, never
 * submitted again). `webhooks`: a live attempt asks for the provider's webhooks where the service
 * has a public URL; a job resumed at start is polled, as it always was. `step`: each poll's answer
 * as the generation's step.
 */
function runProviderJob(
  ctx: GenerationServices,
  on: ConfiguredProvider,
  job: {
    kind: MediaKind;
    count: number;
    webhooks: boolean;
    deadline: number;
    workDir: string;
    signal: AbortSignal;
    step?: StepReport;
  } & ({ resume: SubmittedJob } | { task: ProviderTask; submitted: (job: SubmittedJob) => Promise<void> }),
): Promise<RemoteJobResult> {
  const { provider, settings } = on;
  const webhookUrl = job.webhooks && provider.adapter.webhooks ? webhookUrlFor(ctx.remote, provider.id) : undefined;
  return runRemoteJob({
    adapter: provider.adapter,
    settings: webhookUrl !== undefined ? { ...settings, webhookUrl } : settings,
    kind: job.kind,
    count: job.count,
    ...('resume' in job ? { job: job.resume } : { task: job.task, submitted: job.submitted }),
    deadline: job.deadline,
    workDir: job.workDir,
    signal: job.signal,
    download: downloadPolicy(ctx, job.kind, settings.baseUrl),
    options: ctx.remote.options,
    webhooks: ctx.remote.webhooks,
    log: (m) => ctx.logger.warn(m),
    ...(job.step ? { onStatus: stepOfStatus(job.step) } : {}),
  });
}

/** A provider's poll answer as the generation's step: queued with its position, running (generating) with its progress. */
export function stepOfStatus(step: StepReport): (status: JobStatus) => void {
  return (status) => {
    if (status.status === 'queued') step('queued', { queuePosition: status.position });
    else if (status.status === 'running') step('generating', { progress: status.progress });
  };
}

/**
 * Jobs a previous run submitted that this run does not poll (their provider is not the one it
 * renders on now, or not configured any more): canceled at the provider, so not paid for, and
 * their rows removed.
 */
export async function dropProviderJobs(ctx: GenerationServices, rows: ProviderJobRow[]): Promise<void> {
  for (const row of rows) {
    const on = configuredProvider(ctx, row.providerId);
    if (on) await cancelAtProvider(ctx, on, row.job);
    await deleteProviderJob(ctx.db, row.id);
  }
}

/** Best effort: a provider that does not answer the cancel in time is logged, not waited on. */
async function cancelAtProvider(ctx: GenerationServices, on: ConfiguredProvider, job: SubmittedJob): Promise<void> {
  const { provider, settings } = on;
  try {
    await provider.adapter.cancel(settings, job, AbortSignal.timeout(ctx.remote.options.requestTimeoutMs));
    ctx.logger.info(`${provider.name} job ${job.id} canceled at the provider`);
  } catch (error) {
    ctx.logger.warn(
      `canceling ${provider.name} job ${job.id} failed (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

function downloadPolicy(ctx: GenerationServices, kind: MediaKind, baseUrl: string | undefined): DownloadPolicy {
  return {
    maxBytes: kind === 'video' ? CONTENT_LIMITS.uploadVideoBytes : CONTENT_LIMITS.uploadImageBytes,
    stallMs: ctx.remote.stallMs,
    attempts: 3,
    allowPrivate: outputsMayBePrivate(baseUrl),
    lookup: ctx.imageFetch.lookup,
  };
}

/** The frame shapes providers name; a size whose exact ratio is none of them asks for the nearest. */
const NAMED_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', '9:21', '3:2', '2:3', '5:4', '4:5'];

/**
 * `16:9` from 1280x720. A ratio in small terms is kept as it is (`7:4` from 1344x768); one that is
 * not (854x480, the 480p label's pixels, is `427:240`) is the nearest named shape, since no
 * provider takes such a ratio (docs/providers.md, "Request schemas").
 */
export function aspectRatio(width: number, height: number): string {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(width, height) || 1;
  const [w, h] = [width / d, height / d];
  if (w <= 32 && h <= 32) return `${w}:${h}`;
  const value = width / height;
  const distance = (ratio: string): number => {
    const [a, b] = ratio.split(':').map(Number) as [number, number];
    return Math.abs(Math.log(a / b / value));
  };
  return NAMED_RATIOS.reduce((best, ratio) => (distance(ratio) < distance(best) ? ratio : best));
}

/**
 * The shape a provider is asked for: the creator's `aspect_ratio` when they chose one and the
 * provider receives it (never overridden: routing sent the request only to providers whose schema
 * takes it), else the size's own shape.
 */
export function taskAspectRatio(width: number, height: number, parameters: Record<string, unknown>): string {
  const chosen = parameters['aspect_ratio'];
  return typeof chosen === 'string' && chosen !== '' ? chosen : aspectRatio(width, height);
}

export async function startImageFile(path: string): Promise<{ path: string; mime: string; bytes: number }> {
  return { path, mime: 'image/png', bytes: (await stat(path)).size };
}

/**
 * On start: every remote job a previous run left unfinished is finished like a live generation
 * (poll — never a second submission —, download, pipeline, commit the items, their charge and the
 * idempotency record). A repeat of its request that arrives meanwhile waits for it. Called before
 * the service listens, so no repeat can slip in first. On PostgreSQL also every third of a claim's
 * lease while serving, for the jobs of a node that died (their claims lapsed) or stopped.
 */
export async function resumeProviderJobs(
  ctx: GenerationScope,
  generations?: ResumedGenerations,
  options: { queued?: boolean } = {},
): Promise<number> {
  // On PostgreSQL (`queued`) an asynchronous generation's job belongs to whichever node holds the
  // generation from the queue, which polls it (resumeGenerationJob): never resumed at start. A
  // synchronous one is resumed by the node that claims it (job-claims.ts): one node at a time.
  const claims = options.queued ? ctx.remote.jobClaims : undefined;
  const unclaimed = claims ? await claims.unclaimed() : undefined;
  if (unclaimed?.size === 0) return 0;
  const rows: ProviderJobRow[] = [];
  for (const row of await unfinishedProviderJobs(ctx.db)) {
    if (options.queued && row.generationId !== undefined) continue;
    if (claims && !(unclaimed?.has(row.id) === true && (await claims.take(row.id)))) continue;
    rows.push(row);
  }
  let resumedElsewhere = 0;
  for (const row of rows) {
    const linked = row.generationId !== undefined ? generations?.follow(row.generationId) : undefined;
    if (linked === undefined && row.generationId !== undefined && generations) {
      resumedElsewhere++;
      continue;
    }
    const resumed = resumeOne(ctx, row, linked);
    // Let go of at once when the work ends here (the job finished, failed, or was handed back).
    const work = ctx.track(
      claims
        ? resumed.finally(() =>
            claims
              .release(row.id)
              .catch((error: unknown) =>
                ctx.logger.warn(
                  `could not let go of the claim on provider job ${row.id} (it lapses): ${String(error)}`,
                ),
              ),
          )
        : resumed,
    );
    if (row.generationId !== undefined) generations?.resumed(row.generationId, work);
    if (row.idempotency) ctx.keys.awaitResumed(row.terms.user, row.idempotency, work);
    work.catch((error: unknown) =>
      ctx.logger.error(
        `resuming ${row.providerId} job ${row.job.id} failed: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }
  return rows.length - resumedElsewhere;
}

/** What commits with a generation's items, inside their transaction (`tx` is its handle). */
export type GenerationCommit = (body: GenerationResponse, tx: Db) => Promise<void>;

/**
 * How resumed jobs of asynchronous generations report: their steps, and what commits with their
 * items (the generation's result); `resumed` hands over the work, to end the generation with.
 */
export interface ResumedGenerations {
  /** Undefined: the generation's own run polls the job (remote variations: one job per item). */
  follow(generationId: string): { step: StepReport; commit: GenerationCommit; signal: AbortSignal } | undefined;
  resumed(generationId: string, work: Promise<GenerationResponse>): void;
}

/**
 * A node taking a generation over from the queue: its remote job, left by the node that had it,
 * is polled here (never submitted again) and committed with the generation's result.
 */
export function resumeGenerationJob(
  ctx: GenerationServices,
  row: ProviderJobRow,
  linked: { step: StepReport; commit: GenerationCommit; signal: AbortSignal },
): Promise<GenerationResponse> {
  return ctx.track(resumeOne(ctx, row, linked));
}

async function resumeOne(
  ctx: GenerationServices,
  row: ProviderJobRow,
  linked?: { step: StepReport; commit: GenerationCommit; signal: AbortSignal },
): Promise<GenerationResponse> {
  const { plan, terms } = row;
  const on = configuredProvider(ctx, row.providerId);
  if (!on) {
    await deleteProviderJob(ctx.db, row.id);
    throw new ApiError(
      'provider_unavailable',
      `the ${row.providerId} job ${row.job.id} cannot resume: the provider is not configured any more`,
    );
  }
  const { provider } = on;
  ctx.logger.info(`resuming ${provider.name} job ${row.job.id} (${plan.model}) after a restart`);
  // Admitted before the restart: counted again, never refused.
  const slot = await ctx.concurrency.tryAcquire(terms.user, plan.kind, Number.POSITIVE_INFINITY);
  const workDir = await ctx.layout.makeWorkDir('resume');
  const signal = linked?.signal ?? ctx.shutdown;
  try {
    let result: RemoteJobResult;
    try {
      result = await runProviderJob(ctx, on, {
        kind: plan.kind,
        count: plan.count,
        webhooks: false,
        resume: row.job,
        deadline: row.submittedAt + ctx.remote.options.timeoutMs,
        workDir,
        signal,
        ...(linked ? { step: linked.step } : {}),
      });
      await ctx.providerHealth.success(provider.id);
    } catch (error) {
      if (leftToAnother(ctx.shutdown, linked?.signal)) throw error;
      if (linked?.signal.aborted) await cancelAtProvider(ctx, on, row.job);
      else if (error instanceof ProviderError) await ctx.providerHealth.failure(provider.id, error);
      await deleteProviderJob(ctx.db, row.id);
      throw error;
    }
    const masters = result.masters;
    // A taken-over job is priced by the offer as the catalog has it now, as any resumed job is.
    result = withReportedCost(
      result,
      provider.offers.find((o) => o.model === plan.model),
    );
    const idem = row.idempotency;
    return await finishGeneration(
      ctx,
      {
        plan,
        terms: { ...terms, unitPrice: result.cost !== undefined ? result.cost / masters.length : terms.unitPrice },
        provider: { id: provider.id, slug: provider.slug, name: provider.name },
        masters,
        // Measured from the submission, across the restart.
        generationTime: (Date.now() - row.submittedAt) / 1000,
        providerJobs: [row.id],
        commit: async (body: GenerationResponse, tx: Db) => {
          if (idem) await recordIdempotent(tx, ctx.clock.now(), terms.user, idem, body);
          await linked?.commit(body, tx);
        },
        ...(linked ? { step: linked.step } : {}),
      },
      workDir,
      signal,
    ).catch(async (error: unknown) => {
      if (!leftToAnother(ctx.shutdown, linked?.signal, error)) await deleteProviderJob(ctx.db, row.id);
      throw error;
    });
  } finally {
    slot?.();
    await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
