import type { Generation, GenerationPlan, GenerationResponse, MediaKind } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { GenerationCommit } from './remote-job.ts';
import type { GenerationScope } from './services.ts';
import { ApiError } from '../errors.ts';
import {
  completeGeneration,
  endGeneration,
  getGeneration,
  isFinal,
  toGeneration,
  updateGenerationStep,
} from '../storage/generations.ts';
import type { GenerationRow } from '../storage/generations.ts';
import type { StepReport } from './finish.ts';
import { runGeneration } from './generate.ts';
import { unfinishedProviderJobs } from '../storage/provider-jobs.ts';
import { Canceled, LeaseLost } from './lease.ts';

/**
 * Runs a stored generation in the background and ends it in a final state. `plan`: made just now
 * by planFor (its read of the providers' health serves the run, unless the run waits for a
 * concurrency slot first). `owner`: the queue's attempt that holds it (PostgreSQL); the commit
 * refuses once the row is another's. `synchronous`: a synchronous request's, admitted when the
 * request was (its concurrency slot and storage reservation, slot-handoff.ts): it never waits for a slot.
 */
export function launch(
  ctx: GenerationScope,
  auth: AuthenticatedKey,
  row: GenerationRow,
  plan: GenerationPlan,
  owner?: string,
  synchronous = false,
): Promise<Settled> {
  const follow = followed(ctx, row.id, owner);
  const work = ctx.track(execute(ctx, auth, row, plan, follow, synchronous));
  return settle(ctx, row.id, work, follow.cancel);
}

export interface Followed {
  cancel: AbortController;
  signal: AbortSignal;
  step: StepReport;
  commit: GenerationCommit;
}

/** A generation's cancel, step reports and commit (success, unless canceled, with the items). */
export function followed(ctx: GenerationScope, id: string, owner?: string): Followed {
  const cancel = new AbortController();
  ctx.cancels.set(id, cancel);
  let last = '';
  // Step reports are written in the order they come, without holding the work up; a failed write
  // is only logged (the next step or the end writes the row again).
  let writing: Promise<void> = Promise.resolve();
  return {
    cancel,
    signal: AbortSignal.any([ctx.shutdown, cancel.signal]),
    step: (status, report = {}) => {
      // Polls repeat the same answer: only a change is written.
      const now = `${status}\u0000${report.queuePosition ?? ''}\u0000${report.progress ?? ''}`;
      if (now === last) return;
      last = now;
      const at = ctx.clock.now();
      writing = writing
        .then(() =>
          updateGenerationStep(ctx.db, id, status, at, {
            ...(report.queuePosition !== undefined ? { queuePosition: report.queuePosition } : {}),
            ...(report.progress !== undefined ? { progress: report.progress } : {}),
          }),
        )
        .catch((error: unknown) =>
          ctx.logger.warn(
            `generation ${id}: step not saved: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
    },
    commit: async (body, tx) => {
      // Inside the items' transaction: throwing rolls the items and their charge back. The row is
      // read here too, and on PostgreSQL locked until the commit: whatever ended it canceled (a
      // DELETE, on any node), nothing is charged; a row that is final already or held by another
      // attempt (this node was slow, its lease lapsed and another node took it over) is not
      // committed twice.
      const now = await tx.get<{ status: GenerationRow['status']; lease_owner?: string | null }>(
        tx.dialect === 'postgres'
          ? 'SELECT status, lease_owner FROM generations WHERE id = ? FOR UPDATE'
          : 'SELECT status FROM generations WHERE id = ?',
        id,
      );
      if (cancel.signal.reason instanceof LeaseLost) throw cancel.signal.reason;
      if (cancel.signal.aborted || now?.status === 'canceled') throw new Canceled();
      if (!now || isFinal(now.status) || (owner !== undefined && now.lease_owner !== owner)) throw new LeaseLost(id);
      await completeGeneration(tx, id, body, ctx.clock.now());
    },
  };
}

async function execute(
  ctx: GenerationScope,
  auth: AuthenticatedKey,
  row: GenerationRow,
  plan: GenerationPlan,
  follow: Followed,
  synchronous: boolean,
): Promise<GenerationResponse> {
  // Queued until the account has a free slot of its kind (a synchronous request would get 429),
  // unless a synchronous request's: admitted when the request was. What the request holds, when it
  // is on this node; none when it is on another (it keeps them until the row ends) or gone (a
  // takeover: its slot lapses with its node).
  let waited = false;
  const held = synchronous
    ? (ctx.handoff.take(row.id) ?? { slot: () => undefined, unreserve: () => undefined })
    : undefined;
  const slot = held
    ? held.slot
    : await ctx.concurrency.acquire(
        auth.user,
        plan.kind,
        concurrencyLimit(auth, plan.kind),
        follow.signal,
        () => (waited = true),
      );
  try {
    // Remote variations: the jobs a previous run submitted (a restart, a takeover) are polled as their items.
    const resume = severalJobs(row) ? await unfinishedProviderJobs(ctx.db, row.id) : [];
    return await runGeneration(ctx, auth, plan, follow.commit, {
      ...(resume.length > 0 ? { resume } : {}),
      signal: follow.signal,
      step: follow.step,
      generationId: row.id,
      slot,
      ...(held ? { reservation: held.unreserve } : {}),
      // The plan's read of the providers' health is stale only after a wait (launch's callers plan just before).
      healthReadForPlan: !waited,
    });
  } finally {
    slot();
  }
}

function concurrencyLimit(auth: AuthenticatedKey, kind: MediaKind): number {
  return auth.limits.concurrency[kind];
}

/**
 * How a run ended: `ended` (the row is final, by this node or a DELETE), `stopped` (the service is
 * stopping: the generation resumes on start, or on another node from the queue) or `lost` (another
 * node holds it now, and writes its end).
 */
export type Settled = 'ended' | 'stopped' | 'lost';

/** Ends the generation when its work does (unless the service is stopping: it resumes on start). */
export function settle(
  ctx: GenerationScope,
  id: string,
  work: Promise<unknown>,
  cancel: AbortController,
): Promise<Settled> {
  const done = () => {
    if (ctx.cancels.get(id) === cancel) ctx.cancels.delete(id);
  };
  const ended = work.then(
    async (): Promise<Settled> => {
      done();
      await finished(ctx, id);
      return 'ended';
    },
    async (error: unknown): Promise<Settled> => {
      done();
      if (error instanceof LeaseLost || cancel.signal.reason instanceof LeaseLost) return 'lost';
      if (ctx.shutdown.aborted && !cancel.signal.aborted) return 'stopped';
      if (cancel.signal.aborted) {
        // DELETE has already marked it canceled (and told the hook); this covers any other abort.
        if (await endGeneration(ctx.db, id, 'canceled', canceledError(), ctx.clock.now())) await finished(ctx, id);
        return 'ended';
      }
      const body = endError(error);
      if (!(error instanceof ApiError))
        ctx.logger.error(`generation ${id} failed: ${error instanceof Error ? error.message : String(error)}`);
      if (await endGeneration(ctx.db, id, 'failed', body, ctx.clock.now())) await finished(ctx, id);
      return 'ended';
    },
  );
  // Tracked, so that closing the service waits for the end to be written.
  return ctx.track(ended).catch((error: unknown): Settled => {
    ctx.logger.error(
      `generation ${id}: its end was not saved: ${error instanceof Error ? error.message : String(error)}`,
    );
    // Not final: resumed on start (SQLite), or taken over from the queue (PostgreSQL).
    return 'stopped';
  });
}

/**
 * A failed generation's `error`: an ApiError's code and message, and its `retry_after` (a
 * synchronous request answers with the same 429 or 503 and Retry-After as it would have run here).
 */
function endError(error: unknown): { type: string; message: string; retry_after?: number } {
  if (!(error instanceof ApiError)) return { type: 'api_error', message: 'the generation failed' };
  const wait = error.extra['retry_after'];
  return { type: error.code, message: error.message, ...(typeof wait === 'number' ? { retry_after: wait } : {}) };
}

function canceledError(): { type: string; message: string } {
  return { type: 'canceled', message: 'the generation was canceled (DELETE /v1/generations/:id); nothing was charged' };
}

/** Tells the hook (webhook delivery) about a generation that is final now. */
export async function finished(ctx: GenerationScope, id: string): Promise<void> {
  // A synchronous request on this node waiting for it answers at once (generation-ends.ts).
  ctx.ends.ended(id);
  const row = await getGeneration(ctx.db, id);
  if (!row || !isFinal(row.status)) return;
  try {
    await ctx.generationFinished(
      toGeneration(row),
      row.webhook_url !== null ? { url: row.webhook_url, keyId: row.key_id } : undefined,
    );
  } catch (error) {
    ctx.logger.error(`generationFinished for ${id} threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * `DELETE /generations/:id`: a generation that is not final ends `canceled` now; its run is
 * aborted (a remote job is canceled at the provider, a local render stops) and its items are never
 * committed, so nothing is charged. A final generation is answered as it is.
 */
export async function cancelGeneration(ctx: GenerationScope, row: GenerationRow): Promise<Generation> {
  if (!isFinal(row.status) && (await endGeneration(ctx.db, row.id, 'canceled', canceledError(), ctx.clock.now()))) {
    ctx.cancels.get(row.id)?.abort(new Canceled());
    await finished(ctx, row.id);
  }
  const now = await getGeneration(ctx.db, row.id);
  return toGeneration(now ?? row);
}

/** Remote variations of more than one item run one provider job per item. */
export function severalJobs(row: GenerationRow): boolean {
  if (row.operation !== 'videos.variations') return false;
  const n = (JSON.parse(row.request) as { n?: unknown }).n;
  return typeof n === 'number' && n > 1;
}
