import { rm, stat } from 'node:fs/promises';
import { CONTENT_LIMITS, tokenCharge } from '../../shared/api/index.ts';
import type { GenerationPlan, GenerationResponse, PricedOffer } from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';
import type { ServiceContext } from '../context.ts';
import type { Finishing } from './finish.ts';
import { ApiError } from '../errors.ts';
import { ProviderError } from '../providers/remote/contract.ts';
import type { JobStatus, ProviderTask, SubmittedJob } from '../providers/remote/contract.ts';
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
import { awaitResumed, recordIdempotent } from './idempotency.ts';
import { crashPoint, finishGeneration } from './finish.ts';
import { leftToAnother } from './lease.ts';
import type { StepReport } from './finish.ts';

/** What canceling a job at its provider reads: the provider's settings and timeouts, and the log. */
export type JobCancels = Pick<ServiceContext, 'remote' | 'logger'>;

/** What dropping a previous run's jobs reads: the providers, their settings, the jobs' rows. */
export type ProviderJobDrops = JobCancels & Pick<ServiceContext, 'catalog' | 'db'>;

/** What downloading a job's outputs reads: its stall timeout and the address lookup. */
type OutputDownloads = Pick<ServiceContext, 'remote' | 'imageFetch'>;

/** What one remote job of a live request reads: the provider's settings, the jobs' rows, the service's lifetime. */
export type RemoteAttempts = JobCancels & OutputDownloads & Pick<ServiceContext, 'db' | 'shutdown'>;

/** What finishing a job a previous run left reads: a slot, a work directory, the provider's health, the items' finish. */
type JobResumes = ProviderJobDrops &
  OutputDownloads &
  Finishing &
  Pick<ServiceContext, 'concurrency' | 'layout' | 'shutdown' | 'providerHealth'>;

/** What resuming the jobs a previous run left reads: finishing each, tracked until the service closes. */
export type ProviderJobResumes = JobResumes & Pick<ServiceContext, 'track'>;

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
  /** Each poll's answer (queue position, progress). */
  onStatus?: (status: JobStatus) => void;
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
export async function runRemoteAttempt(ctx: RemoteAttempts, attempt: RemoteAttempt): Promise<RemoteOutcome> {
  const { provider } = attempt;
  const settings = ctx.remote.settings(provider.id);
  if (!settings) throw new ProviderError(provider.id, 'auth', `${provider.name} has no key configured`);
  const webhookUrl = provider.adapter.webhooks ? webhookUrlFor(ctx.remote, provider.id) : undefined;
  const { resume } = attempt;
  const rowId = resume?.id ?? newProviderJobId();
  const signal = attempt.signal ?? ctx.shutdown;
  let persisted = resume !== undefined;
  let accepted: SubmittedJob | undefined = resume?.job;
  if (resume) ctx.logger.info(`resuming ${provider.name} job ${resume.job.id} (${resume.plan.model}) after a restart`);
  try {
    const result = await runRemoteJob({
      adapter: provider.adapter,
      settings: webhookUrl !== undefined ? { ...settings, webhookUrl } : settings,
      kind: attempt.task.kind,
      count: attempt.task.count,
      ...(resume ? { job: resume.job } : { task: attempt.task }),
      submitted: async (job) => {
        accepted = job;
        // Belt and braces over the adapter contract: a key never reaches the database. Such a
        // job still runs, but cannot resume after a restart.
        if (JSON.stringify({ id: job.id, state: job.state }).includes(settings.apiKey)) {
          ctx.logger.error(`${provider.name}'s adapter put its key into the job state; the job is not persisted`);
          return;
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
        persisted = true;
        ctx.logger.info(`${provider.name} accepted job ${job.id} for ${attempt.plan.model}`);
        crashPoint('submitted');
      },
      // A resumed job's timeout counts from its submission, across the restart.
      deadline: (resume?.submittedAt ?? Date.now()) + ctx.remote.options.timeoutMs,
      workDir: attempt.workDir,
      signal,
      download: downloadPolicy(ctx, attempt.task.kind, settings.baseUrl),
      options: ctx.remote.options,
      webhooks: ctx.remote.webhooks,
      log: (m) => ctx.logger.warn(m),
      ...(attempt.onStatus ? { onStatus: attempt.onStatus } : {}),
    });
    return { ...withReportedCost(result, attempt.offer), ...(persisted ? { providerJob: rowId } : {}) };
  } catch (error) {
    // Canceled (not shutting down, not taken over): the provider stops the job too, so it is not paid for.
    if (signal.aborted && !leftToAnother(ctx, signal) && accepted) {
      await cancelAtProvider(ctx, provider, settings, accepted);
    }
    // Shutting down, or another node's now: the job stays at the provider and in provider_jobs,
    // and resumes (on start, or on the node that took it over).
    if (persisted && !leftToAnother(ctx, signal, error)) await deleteProviderJob(ctx.db, rowId);
    if (persisted && error instanceof Error) acceptedJobFailures.add(error);
    throw error;
  }
}

const acceptedJobFailures = new WeakSet<Error>();

/**
 * Jobs a previous run submitted that this run does not poll (their provider is not the one it
 * renders on now, or not configured any more): canceled at the provider, so not paid for, and
 * their rows removed.
 */
export async function dropProviderJobs(ctx: ProviderJobDrops, rows: ProviderJobRow[]): Promise<void> {
  for (const row of rows) {
    const provider = ctx.catalog.providers.find(
      (p): p is RemoteProvider => p.kind === 'remote' && p.id === row.providerId,
    );
    const settings = provider ? ctx.remote.settings(provider.id) : undefined;
    if (provider && settings) await cancelAtProvider(ctx, provider, settings, row.job);
    await deleteProviderJob(ctx.db, row.id);
  }
}

/** Best effort: a provider that does not answer the cancel in time is logged, not waited on. */
export async function cancelAtProvider(
  ctx: JobCancels,
  provider: RemoteProvider,
  settings: NonNullable<ReturnType<ServiceContext['remote']['settings']>>,
  job: SubmittedJob,
): Promise<void> {
  try {
    await provider.adapter.cancel(settings, job, AbortSignal.timeout(ctx.remote.options.requestTimeoutMs));
    ctx.logger.info(`${provider.name} job ${job.id} canceled at the provider`);
  } catch (error) {
    ctx.logger.warn(
      `canceling ${provider.name} job ${job.id} failed (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/**
 * Whether the provider had accepted the job before this failure (polling or downloading failed):
 * retrying would submit — and pay for — a second job, so such a failure falls back instead.
 */
export function failedAfterSubmit(error: unknown): boolean {
  return error instanceof Error && acceptedJobFailures.has(error);
}

function downloadPolicy(ctx: OutputDownloads, kind: 'video' | 'image', baseUrl: string | undefined): DownloadPolicy {
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
  ctx: ProviderJobResumes,
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
    if (row.idempotency) awaitResumed(ctx, row.terms.user, row.idempotency, work);
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
  ctx: ProviderJobResumes,
  row: ProviderJobRow,
  linked: { step: StepReport; commit: GenerationCommit; signal: AbortSignal },
): Promise<GenerationResponse> {
  return ctx.track(resumeOne(ctx, row, linked));
}

async function resumeOne(
  ctx: JobResumes,
  row: ProviderJobRow,
  linked?: { step: StepReport; commit: GenerationCommit; signal: AbortSignal },
): Promise<GenerationResponse> {
  const { plan, terms } = row;
  const provider = ctx.catalog.providers.find(
    (p): p is RemoteProvider => p.kind === 'remote' && p.id === row.providerId,
  );
  const settings = provider ? ctx.remote.settings(provider.id) : undefined;
  if (!provider || !settings) {
    await deleteProviderJob(ctx.db, row.id);
    throw new ApiError(
      'provider_unavailable',
      `the ${row.providerId} job ${row.job.id} cannot resume: the provider is not configured any more`,
    );
  }
  ctx.logger.info(`resuming ${provider.name} job ${row.job.id} (${plan.model}) after a restart`);
  // Admitted before the restart: counted again, never refused.
  const slot = await ctx.concurrency.tryAcquire(terms.user, plan.kind, Number.POSITIVE_INFINITY);
  const workDir = await ctx.layout.makeWorkDir('resume');
  try {
    let result: RemoteJobResult;
    try {
      result = await runRemoteJob({
        adapter: provider.adapter,
        settings,
        kind: plan.kind,
        count: plan.count,
        job: row.job,
        deadline: row.submittedAt + ctx.remote.options.timeoutMs,
        workDir,
        signal: linked?.signal ?? ctx.shutdown,
        ...(linked
          ? {
              onStatus: (s: JobStatus) => {
                if (s.status === 'queued') linked.step('queued', { queuePosition: s.position });
                else if (s.status === 'running') linked.step('generating', { progress: s.progress });
              },
            }
          : {}),
        download: downloadPolicy(ctx, plan.kind, settings.baseUrl),
        options: ctx.remote.options,
        webhooks: ctx.remote.webhooks,
        log: (m) => ctx.logger.warn(m),
      });
      await ctx.providerHealth.success(provider.id);
    } catch (error) {
      if (leftToAnother(ctx, linked?.signal)) throw error;
      if (linked?.signal.aborted) await cancelAtProvider(ctx, provider, settings, row.job);
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
          if (idem) await recordIdempotent(ctx, tx, terms.user, idem.key, idem.fingerprint, body);
          await linked?.commit(body, tx);
        },
        ...(linked ? { step: linked.step } : {}),
      },
      workDir,
      linked?.signal ?? ctx.shutdown,
    ).catch(async (error: unknown) => {
      if (!leftToAnother(ctx, linked?.signal, error)) await deleteProviderJob(ctx.db, row.id);
      throw error;
    });
  } finally {
    slot?.();
    await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
