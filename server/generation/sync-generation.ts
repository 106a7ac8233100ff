import type { ErrorCode, GenerationPlan, GenerationResponse } from '../../shared/api/index.ts';
import { ERROR_STATUS } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError } from '../errors.ts';
import { generationByIdempotencyKey, getGeneration, releaseIdempotencyKey } from '../storage/generations.ts';
import type { GenerationOperation, GenerationRow } from '../storage/generations.ts';
import { cancelGeneration } from './async-generation.ts';
import { planFor } from './request-plan.ts';
import { enqueueOrFail, storeRequest } from './store-request.ts';
import { concurrencyLimitError, reserveFor } from './generate.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import type { Held } from './slot-handoff.ts';
import { IDEMPOTENCY_TTL_MS, idempotencyFingerprint, mismatchError, sameRequest, storedResult } from './idempotency.ts';
import type { GenerationScope, GenerationServices, SynchronousRequest } from './services.ts';

/**
 * A synchronous generation on PostgreSQL (docs/service.md): like an asynchronous one, a `generations`
 * row plus a job of the generation queue, which any node may run; the request waits for the row
 * to end and answers as a synchronous request always has (its items, or its error, with the same
 * status). So a node that dies mid-generation loses only its connections: another node takes the
 * job over once its lease lapses, and the caller's retry with the same Idempotency-Key, on any
 * node, follows that generation to its one result, charged once.
 *
 * What stays synchronous: the request is validated and planned before anything is stored (its
 * 400s), and refused at once when its estimate would pass the storage quota or the account's
 * slots of its kind are taken (429s). Both are held for the job (slot-handoff.ts), which runs on a
 * queue of its own whose workers never wait for a slot (server/storage/generation-queue.ts). A client that hangs up cancels the generation (nothing is stored or charged);
 * this node stopping does not (503: the generation goes on from the queue).
 *
 * On SQLite (one node, the embedded Local engine) a synchronous generation runs in the request, as
 * it always has (routes/generations.ts).
 */
export async function runQueuedSynchronously(
  ctx: GenerationScope,
  queue: GenerationQueue,
  auth: AuthenticatedKey,
  request: SynchronousRequest,
  hangUp: AbortSignal,
): Promise<{ body: GenerationResponse; replayed: boolean }> {
  const { operation, endpoint, raw, key } = request;
  const idempotency = key !== undefined ? { key, fingerprint: idempotencyFingerprint(key, endpoint, raw) } : undefined;
  if (idempotency) {
    // A result recorded by a synchronous request that ran in its request (imported from SQLite).
    const stored = await storedResult<GenerationResponse>(ctx.db, ctx.clock.now(), auth.user, idempotency);
    if (stored !== undefined) return { body: stored, replayed: true };
  }
  let planned: GenerationPlan | undefined;
  // A repeat racing this one may store its row first (the key's unique index): then it is
  // followed. The loop ends in a few turns: each turn either follows a row, inserts one, or
  // finds the key freed by a row that ended without a result.
  for (let turn = 0; turn < 8; turn++) {
    if (idempotency) {
      const earlier = await generationByIdempotencyKey(ctx.db, auth.user, idempotency.key);
      // A failed or canceled one (or a result past the idempotency window) frees the key.
      const freed = earlier
        ? await releaseIdempotencyKey(ctx.db, earlier.id, ctx.clock.now() - IDEMPOTENCY_TTL_MS)
        : false;
      if (earlier && !freed) {
        if (!sameRequest(earlier.idempotency_fingerprint, { key: idempotency.key, operation, raw }))
          throw mismatchError();
        // A repeat follows the first request's generation. Should that fail (a provider job that
        // failed after a restart, a hang-up that canceled it), nothing was stored or charged: the
        // next turn frees the key and the repeat runs afresh, with every fallback a run has.
        const row = await ended(ctx, earlier.id, hangUp, { own: false, key: true });
        if (row.status === 'succeeded' && row.result !== null)
          return { body: JSON.parse(row.result) as GenerationResponse, replayed: true };
        continue;
      }
    }
    planned ??= await planFor(ctx, auth, operation, raw);
    const held = await holdFor(ctx, auth, planned);
    let release = () => {
      held.slot();
      held.unreserve();
    };
    try {
      const { id, inserted } = await storeRequest(ctx, auth, operation, raw, planned, {
        // A synchronous request's webhook_url is validated, never called (routes/generations.ts).
        webhookUrl: null,
        synchronous: true,
        ...(idempotency ? { idempotency } : {}),
      });
      if (!inserted) continue;
      release = ctx.handoff.offer(id, held);
      await enqueueOrFail(ctx, queue, id, { synchronous: true });
      const row = await ended(ctx, id, hangUp, { own: true, key: idempotency !== undefined });
      if (row.status === 'succeeded' && row.result !== null)
        return { body: JSON.parse(row.result) as GenerationResponse, replayed: false };
      throw failureOf(row);
    } finally {
      release();
    }
  }
  throw new Error('a synchronous generation found its Idempotency-Key taken and freed too many times');
}

/**
 * SQLite, where a synchronous request runs in its request: when an asynchronous generation holds
 * its Idempotency-Key (one key space, docs/api.md), the request follows it, and answers its result
 * once it ends. Undefined when there is none, or when it failed or was canceled, or its result is
 * past the idempotency window (nothing to answer: the key is let go of and this request runs).
 */
export async function followKeyedGeneration(
  ctx: GenerationScope,
  auth: AuthenticatedKey,
  request: { key: string; operation: GenerationOperation; raw: unknown },
  hangUp: AbortSignal,
): Promise<GenerationResponse | undefined> {
  // In the key's turn (idempotency.ts): an asynchronous request is not between its look and its insert.
  const earlier = await ctx.keys.keyTurn(auth.user, request.key, () =>
    generationByIdempotencyKey(ctx.db, auth.user, request.key),
  );
  if (!earlier) return undefined;
  if (!sameRequest(earlier.idempotency_fingerprint, request)) throw mismatchError();
  const madeBy = ctx.clock.now() - IDEMPOTENCY_TTL_MS;
  if (await releaseIdempotencyKey(ctx.db, earlier.id, madeBy)) return undefined;
  const row = await ended(ctx, earlier.id, hangUp, { own: false, key: true });
  if (row.status === 'succeeded' && row.result !== null) return JSON.parse(row.result) as GenerationResponse;
  await releaseIdempotencyKey(ctx.db, earlier.id, madeBy);
  return undefined;
}

/**
 * What a synchronous request is refused for before anything is stored, in the order a run in the
 * request checks them (generate.ts): the storage quota by the estimate, then a concurrency slot.
 */
async function holdFor(ctx: GenerationServices, auth: AuthenticatedKey, plan: GenerationPlan): Promise<Held> {
  const unreserve = await reserveFor(ctx, auth, plan);
  const limit = auth.limits.concurrency[plan.kind];
  const slot = await ctx.concurrency.tryAcquire(auth.user, plan.kind, limit).catch((error: unknown) => {
    unreserve();
    throw error;
  });
  if (!slot) {
    unreserve();
    throw concurrencyLimitError(plan.kind, limit);
  }
  return { slot, unreserve };
}

/**
 * Waits for the generation to end: its final row. `own`: this request queued it (its hang-up
 * cancels it); `key`: the request can come back for it with its Idempotency-Key.
 */
async function ended(
  ctx: GenerationScope,
  id: string,
  hangUp: AbortSignal,
  request: { own: boolean; key: boolean },
): Promise<GenerationRow> {
  const row = await ctx.ends.until(id, AbortSignal.any([hangUp, ctx.shutdown]));
  if (row === null) {
    if (hangUp.aborted) {
      if (request.own) await cancel(ctx, id);
      throw new ApiError('invalid_request_error', 'the client hung up: the generation was canceled');
    }
    // This node is stopping. The generation is not canceled (a provider may have started, and
    // charges, a job): it goes on from the queue, on another node or at the next start, and its
    // items land in the library, as a stop mid-request always had them (remote-job.ts).
    throw new ApiError(
      'provider_unavailable',
      request.key
        ? 'this node of the service is stopping; the generation goes on: send the request again with the same Idempotency-Key for its result'
        : 'this node of the service is stopping; the generation goes on and its items will be in the library (GET /v1/media)',
      { retry_after: 1 },
      { 'retry-after': '1' },
    );
  }
  if (row === undefined) throw new Error(`generation ${id} vanished while its request waited`);
  return row;
}

async function cancel(ctx: GenerationScope, id: string): Promise<void> {
  const row = await getGeneration(ctx.db, id);
  if (row) await cancelGeneration(ctx, row);
}

/** A failed or canceled generation's error as the synchronous request's (settle() wrote it). */
function failureOf(row: GenerationRow): ApiError {
  const error = JSON.parse(row.error ?? '{}') as { type?: string; message?: string; retry_after?: number };
  const message = error.message ?? 'the generation failed';
  // Canceled by DELETE /v1/generations/:id while this request waited for it.
  if (row.status === 'canceled') return new ApiError('invalid_request_error', message);
  const code: ErrorCode =
    error.type !== undefined && Object.hasOwn(ERROR_STATUS, error.type) ? (error.type as ErrorCode) : 'internal_error';
  if (typeof error.retry_after !== 'number') return new ApiError(code, message);
  return new ApiError(code, message, { retry_after: error.retry_after }, { 'retry-after': String(error.retry_after) });
}
