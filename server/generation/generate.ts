import { rm } from 'node:fs/promises';
import type { GenerationPlan, GenerationResponse, MediaKind } from '../../shared/api/index.ts';
import { END_IMAGE_PARAMETER } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError, rateLimitError } from '../errors.ts';
import { TYPICAL_RENDER_SECONDS } from '../limits/concurrency.ts';
import { estimateGenerationBytes, reserveStorage } from '../limits/storage-quota.ts';
import { SLOT_LEASE_MS } from '../limits/leased-rows.ts';
import { deleteProviderJob } from '../storage/provider-jobs.ts';
import { getMedia } from '../storage/media-repo.ts';
import { finishGeneration } from './finish.ts';
import { firstFrameOf, resolveImageUrl } from './image-source.ts';
import { leftToAnother } from './lease.ts';
import { unitPrice, usableCandidates } from './plan.ts';
import { dropProviderJobs } from './remote-job.ts';
import { resumedItems } from './remote-items.ts';
import { describe, renderWithFallback } from './render.ts';
import type { Commit, RunOptions } from './run-options.ts';
import { retentionMs } from './services.ts';
import type { GenerationServices } from './services.ts';

/**
 * Runs a planned generation: limits, the start image, the provider with fallbacks, the pipeline,
 * then storage. `run.signal` stops it (an asynchronous generation's cancel, a synchronous
 * request's client hanging up); by default it is tied to the service's lifetime.
 */
export async function runGeneration(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  plan: GenerationPlan,
  /**
   * Called inside the transaction that commits the items (the idempotency record goes there; an
   * asynchronous generation's result too, and its refusal to commit once canceled).
   */
  commit?: Commit,
  run: RunOptions = {},
): Promise<GenerationResponse> {
  const started = performance.now();
  // A cooldown another node started since the plan (or while an asynchronous one waited) counts.
  if (run.healthReadForPlan !== true) await ctx.providerHealth.refresh();
  const candidates = usableCandidates(ctx, plan);
  // Refused before any work when its estimated size would pass the quota (storage-quota.ts); the
  // check and the reservation are one step in the database, so no two requests, on any node, both
  // pass on the same space.
  const unreserve = run.reservation ?? (await reserveFor(ctx, auth, plan));
  const slot = await (async () => {
    const limit = auth.limits.concurrency[plan.kind];
    const taken = run.slot ?? (await ctx.concurrency.tryAcquire(auth.user, plan.kind, limit));
    if (!taken) throw concurrencyLimitError(plan.kind, limit);
    return taken;
  })().catch((error: unknown) => {
    unreserve();
    throw error;
  });
  const release = () => {
    slot();
    unreserve();
  };
  const workDir = await ctx.layout.makeWorkDir('gen').catch((error: unknown) => {
    release();
    throw error;
  });
  const signal = run.signal ?? ctx.shutdown;
  try {
    // Checked even when the chosen provider will drop it: a bad image_url is a bad request.
    const startImage = await startImageFor(ctx, auth, plan, workDir, signal);
    const endImage = await endImageFor(ctx, auth, plan, workDir, signal);
    const setupTime = (performance.now() - started) / 1000;

    const renderStart = performance.now();
    const resumed = await resumedItems(ctx, run.resume ?? [], candidates);
    const rendered = await renderWithFallback(ctx, auth, plan, candidates, {
      startImage,
      endImage,
      workDir,
      setupTime,
      commit,
      signal,
      run,
      resumed,
    }).finally(async () => {
      // Jobs of a provider the run left before polling them: not paid for.
      if (resumed && !leftToAnother(ctx.shutdown, signal)) {
        await dropProviderJobs(ctx, [...resumed.items.values()]);
        resumed.items.clear();
      }
    });
    const generationTime = (performance.now() - renderStart) / 1000;
    const { candidate, masters } = rendered;
    const provider = candidate.provider;
    return await finishGeneration(
      ctx,
      {
        plan,
        terms: {
          user: auth.user,
          keyId: auth.keyId,
          retentionMs: retentionMs(ctx.retentionOverrideSeconds, auth.limits),
          ignoredParameters: candidate.ignoredParameters,
          // A provider that reports what it charged is charged on; otherwise the catalog price.
          unitPrice: rendered.cost !== undefined ? rendered.cost / masters.length : unitPrice(plan, candidate),
          retries: rendered.retries,
          setupTime,
        },
        provider: { id: provider.id, slug: provider.slug, name: provider.name },
        masters,
        generationTime,
        ...(rendered.providerJobs ? { providerJobs: rendered.providerJobs } : {}),
        ...(commit ? { commit } : {}),
        ...(run.step ? { step: run.step } : {}),
      },
      workDir,
      signal,
    ).catch(async (error: unknown) => {
      // The provider's job is over either way: a restart must not resume (and charge) it. Unless
      // the work goes on elsewhere (a restart, another node that took the generation over).
      if (!leftToAnother(ctx.shutdown, signal, error))
        for (const job of rendered.providerJobs ?? []) await deleteProviderJob(ctx.db, job);
      throw error;
    });
  } finally {
    // The slot first: the next generation need not wait for the clean-up. The removal is retried,
    // since a process killed a moment ago may still be closing a file in it (ENOTEMPTY).
    release();
    await rm(workDir, { recursive: true, force: true, maxRetries: 5 }).catch((error: unknown) =>
      ctx.logger.warn(`could not remove the work directory ${workDir}: ${describe(error)}`),
    );
  }
}

/** Reserves the plan's estimated size against the account's storage quota, or throws its 429. */
export function reserveFor(ctx: GenerationServices, auth: AuthenticatedKey, plan: GenerationPlan): Promise<() => void> {
  return reserveStorage(
    { db: ctx.db, now: ctx.clock.now(), reservations: ctx.reservations },
    auth.user,
    auth.limits,
    { bytes: estimateGenerationBytes(plan), kind: plan.kind, what: 'This generation (by its estimated size)' },
    (error) =>
      ctx.logger.warn(
        `could not release a storage reservation yet (retrying; it is no longer renewed, so it frees within ${SLOT_LEASE_MS / 1000} s at the latest): ${String(error)}`,
      ),
  );
}

/** A synchronous request when the account's slots of its kind are all taken: 429, never a wait. */
export function concurrencyLimitError(kind: MediaKind, limit: number): ApiError {
  return rateLimitError(
    `Concurrent ${kind} generations are limited to ${limit} for this account`,
    TYPICAL_RENDER_SECONDS[kind],
  );
}

async function startImageFor(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  plan: GenerationPlan,
  workDir: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (plan.startFrameOf !== undefined) {
    const source = await getMedia(ctx.db, plan.startFrameOf);
    // Deleted since the request was planned (or not the caller's): the variation cannot start.
    if (!source || source.user_id !== auth.user)
      throw new ApiError('not_found_error', `media ${plan.startFrameOf} does not exist any more`);
    return firstFrameOf(ctx, source, workDir, signal);
  }
  return plan.imageUrl !== undefined ? resolveImageUrl(ctx, auth.user, plan.imageUrl, workDir, signal) : undefined;
}

/**
 * The end frame (the model's image parameter `end_image_url`), resolved as `image_url` is: the
 * service's own URLs by id, others fetched from a public address, and decoded (docs/api.md).
 */
async function endImageFor(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  plan: GenerationPlan,
  workDir: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const url = plan.parameters[END_IMAGE_PARAMETER];
  if (typeof url !== 'string') return undefined;
  return resolveImageUrl(ctx, auth.user, url, workDir, signal, END_IMAGE_PARAMETER);
}
