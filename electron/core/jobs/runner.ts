/**
 * The runner: performs what the state machine (machine.ts) asks of a job's run — the upload, the
 * generation call, following or finding its result, the downloads — through the ports, and feeds
 * each answer back to the machine as an event.
 */
import { randomUUID } from 'node:crypto';
import type { GeneratedItem, Generation, GenerationResponse } from '../../../shared/api/index.ts';
import { generationResult } from '../api/generations.ts';
import { ServiceError, type ServiceErrorCode } from '../api/errors.ts';
import { DEFAULT_RETRY_POLICY, realSleep, retrying } from '../api/retry.ts';
import type { RetryDeps, RetryingOptions, WaitNotice } from '../api/retry.ts';
import { findJobItems } from './find-items.ts';
import { frameToUpload } from './frames.ts';
import type { JobEffect, JobEvent } from './machine.ts';
import { errorInfo } from './ports.ts';
import type { GenerationCallOptions, TransferRetries } from './ports.ts';
import type { TransferProgress } from './progress.ts';
import { apply, Stopped } from './runtime.ts';
import type { QueueState } from './queue-state.ts';
import { routeFromResponse } from './state.ts';
import type { Job, JobResult } from './state.ts';
import { isUnreachable } from './waiting.ts';

const AMBIGUOUS = new Set<ServiceErrorCode>(['network_error', 'timeout', 'internal_error', 'invalid_response']);

/**
 * What items found in /media cost: the sum of their prices (each item carries its own charge), or
 * null when the service does not say. Before, such a job had no price at all, so the finished
 * jobs added up to less than the service had charged.
 */
function itemsPrice(items: readonly GeneratedItem[]): number | null {
  if (items.length === 0 || items.some((i) => typeof i.price !== 'number')) return null;
  return Math.round(items.reduce((n, i) => n + (i.price ?? 0), 0) * 1e6) / 1e6;
}

/** The retry layer's sleep (core/api/retry.ts); a stopped run ends it as `Stopped`. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  realSleep(ms, signal).catch(() => {
    throw new Stopped();
  });

/** A 429's wait: its retry_after, else the queue's default. */
const rateLimitWaitMs = (rt: QueueState, retryAfter: number | null): number =>
  retryAfter !== null ? retryAfter * 1000 : rt.settings.defaultRetryAfterMs;

/** Failures worth asking again after a wait: no answer seen, or a 429. The service being gone is not one. */
function askAgain(error: unknown): boolean {
  const { code } = errorInfo(error);
  return !isUnreachable(error) && (AMBIGUOUS.has(code) || code === 'rate_limit_exceeded');
}

/**
 * How the run asks again (core/api/retry.ts, the one retry loop): within the job's retry budget,
 * each wait shown on the job, a 429 after its Retry-After and anything else after
 * `reconcilePollMs`; a stopped run ends the wait.
 */
function runRetries(
  rt: QueueState,
  job: Job,
  signal: AbortSignal,
): { deps: RetryDeps; options: Omit<RetryingOptions, 'what' | 'retryable'> } {
  const waitFor = (_failures: number, error: unknown): { ms: number; reason: WaitNotice['reason'] } => {
    const info = errorInfo(error);
    return info.code === 'rate_limit_exceeded'
      ? { ms: rateLimitWaitMs(rt, info.retryAfter), reason: 'rate_limit' }
      : { ms: rt.settings.reconcilePollMs, reason: 'retry' };
  };
  return {
    deps: { policy: DEFAULT_RETRY_POLICY, random: Math.random, sleep: (ms) => sleep(ms, signal) },
    options: {
      maxRetries: 4,
      budget: rt.retryBudget(job.id),
      waitFor,
      onWait: (notice) => rt.progress.wait(job.id, notice, rt.jobs.get(job.id)?.generationId ?? null),
      signal,
    },
  };
}

/** Feeds `event` to the machine, then runs the effects it asks for, in order. */
export async function advance(rt: QueueState, id: string, event: JobEvent, signal: AbortSignal): Promise<void> {
  const { job, runs } = apply(rt, id, event, signal);
  for (const effect of runs) await perform(rt, job, effect, signal);
}

/** Runs one of the machine's run effects for `job` (as the step left it). */
export function perform(rt: QueueState, job: Job, effect: JobEffect, signal: AbortSignal): Promise<void> {
  switch (effect.type) {
    case 'upload':
      return upload(rt, job, signal);
    case 'submit':
      return generate(rt, job, signal);
    case 'download':
      return download(rt, job, signal);
    case 'follow':
      return follow(rt, job, signal);
    case 'reconcile':
      return reconcile(rt, job, signal);
    default:
      return Promise.resolve();
  }
}

/** A transfer's retries: their waits come from the job's budget and show on the job. */
function transferRetries(rt: QueueState, job: Job, key: 'upload' | 'download'): TransferRetries {
  return {
    retryBudget: rt.retryBudget(job.id),
    onWait: (notice) => rt.progress.transferWait(job.id, key, notice),
  };
}

/**
 * Uploads the job's next local frame (frames.ts: the start frame, then the end frame), and tells
 * the machine, which writes its URL and asks for the next one or submits. The upload bar covers
 * both frames of a run: the end frame's bytes count after those of the start frame sent before it.
 */
async function upload(rt: QueueState, job: Job, signal: AbortSignal): Promise<void> {
  if (!rt.uploader)
    throw new ServiceError('invalid_request_error', 'No uploader is configured for local start and end frames');
  if (signal.aborted) throw new Stopped();
  const next = frameToUpload(job);
  if (!next) throw new ServiceError('invalid_request_error', 'This job has no frame left to upload');
  const before = next.frame === 'start' ? 0 : (rt.progress.get(job.id).upload?.done ?? 0);
  let url: string;
  try {
    ({ url } = await rt.uploader.upload(
      { path: next.path },
      // The uploader reports 0 of 0 while it checks the file: the size is not known yet.
      {
        signal,
        onProgress: (p) =>
          rt.progress.transfer(job.id, 'upload', {
            done: before + p.sent,
            total: p.total > 0 ? before + p.total : null,
          }),
        ...transferRetries(rt, job, 'upload'),
      },
    ));
  } catch (error) {
    if (signal.aborted || !isUnreachable(error)) throw error;
    return advance(rt, job.id, { type: 'unreachable', message: errorInfo(error).message }, signal);
  }
  return advance(rt, job.id, { type: 'uploaded', frame: next.frame, url }, signal);
}

/** The generation call, with the POST's flight marked for cancel (see cancelGraceMs). */
async function callGenerate(rt: QueueState, job: Job, signal: AbortSignal): Promise<GenerationResponse> {
  rt.submitStarted(job.id);
  const answer = { accepted: false };
  try {
    const response = await callGenerateOnce(rt, job, signal, answer);
    // A result without a 202 first: the service has no asynchronous mode.
    if (!answer.accepted) rt.answered(false);
    return response;
  } finally {
    rt.submitEnded(job.id);
  }
}

function callGenerateOnce(
  rt: QueueState,
  job: Job,
  signal: AbortSignal,
  answer: { accepted: boolean },
): Promise<GenerationResponse> {
  const { api } = rt;
  const opts: GenerationCallOptions = {
    idempotencyKey: job.idempotencyKey ?? randomUUID(),
    signal,
    timeoutMs: rt.settings.generationTimeoutMs,
    onAccepted: (generation) => {
      answer.accepted = true;
      rt.answered(true);
      rt.submitEnded(job.id);
      apply(rt, job.id, { type: 'accepted', generationId: generation.id });
    },
    onUpdate: (generation) => rt.progress.generation(job.id, generation),
    onWait: (notice) => rt.progress.wait(job.id, notice, rt.jobs.get(job.id)?.generationId ?? null),
    retryBudget: rt.retryBudget(job.id),
  };
  if (job.variationOf) {
    if (!api.createVariations) {
      throw new ServiceError('invalid_request_error', 'This service cannot make variations');
    }
    const r = job.request;
    return api.createVariations(
      {
        media_id: job.variationOf,
        n: typeof r.n === 'number' ? r.n : 1,
        ...(r.prompt ? { prompt: r.prompt } : {}),
        ...(r.seed !== undefined ? { seed: r.seed } : {}),
        ...(r.routing ? { routing: r.routing } : {}),
        ...(r.provider ? { provider: r.provider } : {}),
      },
      opts,
    );
  }
  return job.kind === 'video' ? api.generateVideo(job.request, opts) : api.generateImage(job.request, opts);
}

/** What a failed generation call means for the job (the machine decides what follows). */
function submitFailure(rt: QueueState, job: Job, error: unknown): JobEvent {
  const info = errorInfo(error);
  if (info.code === 'canceled') return { type: 'canceledOnService', detail: info.message };
  if (info.code === 'rate_limit_exceeded') {
    // The wait in the queue is a retry's wait too: past the job's budget, the 429 ends it.
    const waitMs = rt.retryBudget(job.id).take(rateLimitWaitMs(rt, info.retryAfter));
    if (waitMs === null) return { type: 'failed', error: { code: info.code, message: info.message } };
    return { type: 'rateLimited', waitMs, message: info.message };
  }
  // No connection at all: nothing reached the service. Wait for it (same key kept).
  if (isUnreachable(error)) return { type: 'unreachable', message: info.message };
  // The request may have reached the service: find out instead of guessing.
  if (AMBIGUOUS.has(info.code)) return { type: 'ambiguous', generationId: rt.jobs.get(job.id)?.generationId ?? null };
  return { type: 'failed', error: { code: info.code, message: info.message } };
}

async function generate(rt: QueueState, job: Job, signal: AbortSignal): Promise<void> {
  let response;
  try {
    response = await callGenerate(rt, job, signal);
  } catch (error) {
    if (signal.aborted || rt.jobs.get(job.id)?.state === 'canceled') throw new Stopped();
    return advance(rt, job.id, submitFailure(rt, job, error), signal);
  }
  const result = { items: response.data, price: response.price };
  await advance(rt, job.id, { type: 'generated', result, route: routeFromResponse(job.route, response) }, signal);
}

/** After a restart or a lost answer: the service has this job's generation, so follow it. */
async function follow(rt: QueueState, job: Job, signal: AbortSignal): Promise<void> {
  const { api } = rt;
  const { generationId } = job;
  if (!api.waitForGeneration || !generationId) return reconcile(rt, job, signal);
  const { deps, options } = runRetries(rt, job, signal);
  let final: Generation;
  try {
    final = await retrying(
      deps,
      { ...options, what: `following generation ${generationId}`, retryable: askAgain },
      () =>
        api.waitForGeneration!(generationId, {
          signal,
          timeoutMs: rt.settings.generationTimeoutMs,
          onUpdate: (generation) => rt.progress.generation(job.id, generation),
          onWait: (notice) => rt.progress.wait(job.id, notice, rt.jobs.get(job.id)?.generationId ?? null),
          retryBudget: rt.retryBudget(job.id),
        }),
    );
  } catch (error) {
    if (signal.aborted) throw new Stopped();
    const info = errorInfo(error);
    // The service is gone: wait for it; the repeat (same key) finds this generation again.
    if (isUnreachable(error)) return advance(rt, job.id, { type: 'unreachable', message: info.message }, signal);
    // A service that lost the generation (or never had async mode): find the result another way.
    if (info.code === 'not_found_error') return reconcile(rt, job, signal);
    throw error;
  }
  return settle(rt, job, final, signal);
}

/** A final generation record: its items, or the job's failure or cancelation. */
function settle(rt: QueueState, job: Job, final: Generation, signal: AbortSignal): Promise<void> {
  if (final.status === 'canceled') {
    return advance(rt, job.id, { type: 'canceledOnService', detail: 'canceled on the service' }, signal);
  }
  const response = generationResult(final);
  const result: JobResult = { items: response.data, price: response.price, recoveredBy: 'generation' };
  return advance(rt, job.id, { type: 'generated', result, route: routeFromResponse(job.route, response) }, signal);
}

async function download(rt: QueueState, job: Job, signal: AbortSignal): Promise<void> {
  const items = job.result?.items ?? [];
  const paths = [...job.downloads];
  // Bytes of the items already saved in this run; the bar covers them plus the current one.
  let before = 0;
  for (const item of items.slice(paths.length)) {
    let last: TransferProgress = { done: 0, total: null };
    const { path, bytes } = await rt.downloader!.download({
      item,
      signal,
      context: { jobId: job.id, price: job.result?.price ?? undefined },
      onProgress: (p) => {
        last = { done: before + p.received, total: p.total === null ? null : before + p.total };
        rt.progress.transfer(job.id, 'download', last);
      },
      ...transferRetries(rt, job, 'download'),
    });
    if (signal.aborted) throw new Stopped();
    before = bytes ?? last.total ?? last.done;
    paths.push(path);
    apply(rt, job.id, { type: 'saved', downloads: [...paths] });
  }
  // A file that was already on disk reports nothing: the bar still ends full.
  if (paths.length > job.downloads.length) rt.progress.transfer(job.id, 'download', { done: before, total: before });
  await advance(rt, job.id, { type: 'downloaded', downloads: paths }, signal);
}

/**
 * Same key, same body: the service answers with the first result (or waits for it). Null when it
 * would not say within the retries; `unreachable` when the service is gone.
 */
async function askAgainWithKey(
  rt: QueueState,
  job: Job,
  signal: AbortSignal,
): Promise<{ answered: GenerationResponse } | { unreachable: string } | null> {
  const { deps, options } = runRetries(rt, job, signal);
  try {
    const answered = await retrying(
      deps,
      { ...options, what: 'asking again with the same Idempotency-Key', retryable: askAgain },
      () => callGenerate(rt, job, signal),
    );
    return { answered };
  } catch (error) {
    if (signal.aborted) throw new Stopped();
    // The service is gone: the job waits for it and repeats this same request (same key) then.
    if (isUnreachable(error)) return { unreachable: errorInfo(error).message };
    return null;
  }
}

/** A job that may have been submitted but whose answer we never saw. Never blindly resubmitted. */
async function reconcile(rt: QueueState, job: Job, signal: AbortSignal): Promise<void> {
  if (rt.settings.useIdempotency && job.idempotencyKey) {
    const answer = await askAgainWithKey(rt, job, signal);
    if (answer && 'unreachable' in answer) {
      return advance(rt, job.id, { type: 'unreachable', message: answer.unreachable }, signal);
    }
    if (answer) {
      const { answered } = answer;
      const result: JobResult = { items: answered.data, price: answered.price, recoveredBy: 'idempotency' };
      const route = routeFromResponse(job.route, answered);
      return advance(rt, job.id, { type: 'generated', result, route }, signal);
    }
  }
  for (;;) {
    const found = await findInLibrary(rt, job, signal);
    if (found.length > 0) {
      const result: JobResult = { items: found, price: itemsPrice(found), recoveredBy: 'library' };
      return advance(rt, job.id, { type: 'generated', result }, signal);
    }
    if (rt.clock.now() >= (job.submittedAt ?? 0) + rt.settings.reconcileWindowMs) {
      return advance(rt, job.id, { type: 'lost' }, signal);
    }
    // A look that found nothing yet is not a failure: it takes nothing from the budget, but is said.
    const what = "looking for the result in the service's media again";
    rt.progress.wait(job.id, { reason: 'retry', ms: rt.settings.reconcilePollMs, what }, job.generationId);
    await sleep(rt.settings.reconcilePollMs, signal);
  }
}

/** Items of /media with the same prompt and model, created after the submit, not claimed by another job. */
async function findInLibrary(rt: QueueState, job: Job, signal: AbortSignal): Promise<GeneratedItem[]> {
  try {
    // Removed jobs' items stay claimed: they were someone else's result.
    return await findJobItems(rt.api, job, {
      since: (job.submittedAt ?? 0) - rt.settings.skewMs,
      claimed: rt.journal.claimedItemIds(job.id),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw new Stopped();
    if (AMBIGUOUS.has(errorInfo(error).code) || errorInfo(error).code === 'rate_limit_exceeded') return [];
    throw error;
  }
}
