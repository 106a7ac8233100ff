import type { GenerationResponse } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import { planFor } from './request-plan.ts';
import { runGeneration } from './generate.ts';
import type { RecordResult } from './idempotency.ts';
import type { Commit } from './run-options.ts';
import type { GenerationScope, SynchronousRequest } from './services.ts';
import { followKeyedGeneration } from './sync-generation.ts';

/**
 * A synchronous request on one node (SQLite, the embedded Local engine): the generation runs in the
 * request. With an Idempotency-Key, a repeat gets the first request's answer, and an asynchronous
 * generation holding the key (one key space, docs/api.md) is followed to its result. A client
 * that hangs up (`hangUp`) cancels it: nothing is stored or charged.
 */
export async function runInRequest(
  ctx: GenerationScope,
  auth: AuthenticatedKey,
  request: SynchronousRequest,
  hangUp: AbortSignal,
): Promise<{ body: GenerationResponse; replayed: boolean }> {
  const { operation, endpoint, raw, key } = request;
  let followed = false;
  const { body, replayed } = await ctx.keys.withIdempotency<GenerationResponse>(
    auth,
    endpoint,
    key,
    raw,
    async (record) => {
      // Looked for once this request is registered as running, so a repeat in either mode sees it.
      const earlier = record
        ? await followKeyedGeneration(ctx, auth, { key: record.key, operation, raw }, hangUp)
        : undefined;
      if (earlier) {
        followed = true;
        return earlier;
      }
      const planned = await planFor(ctx, auth, operation, raw);
      return await ctx.track(
        runGeneration(ctx, auth, planned, refusedOnceGone(record, hangUp), {
          signal: AbortSignal.any([ctx.shutdown, hangUp]),
          // Planned a moment ago, and a synchronous request never waits for its slot (429).
          healthReadForPlan: true,
        }),
      );
    },
  );
  return { body, replayed: replayed || followed };
}

/**
 * The commit of a synchronous generation, checked inside the transaction that stores its items and
 * charge: a client gone by then gets nothing stored and is charged nothing.
 */
function refusedOnceGone(record: RecordResult<GenerationResponse> | undefined, gone: AbortSignal): Commit {
  const refuse = () => {
    if (gone.aborted) throw new ApiError('invalid_request_error', 'the client hung up: the generation was canceled');
  };
  if (!record) return () => Promise.resolve().then(refuse);
  return Object.assign(
    async (body: GenerationResponse, tx: Db) => {
      refuse();
      await record(body, tx);
    },
    { key: record.key, fingerprint: record.fingerprint },
  );
}
