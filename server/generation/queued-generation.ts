import { keyById } from '../auth/api-keys.ts';
import {
  claimGeneration,
  endGeneration,
  getGeneration,
  isFinal,
  updateGenerationStep,
} from '../storage/generations.ts';
import type { GenerationRow } from '../storage/generations.ts';
import { unfinishedProviderJobs } from '../storage/provider-jobs.ts';
import type { GenerationPlan } from '../../shared/api/index.ts';
import { finished, followed, launch, settle, severalJobs } from './async-generation.ts';
import { planOfRow } from './request-plan.ts';
import type { Settled } from './async-generation.ts';
import { HandedBack } from '../storage/generation-queue.ts';
import type { QueuedGeneration } from '../storage/generation-queue.ts';
import { dropProviderJobs, resumeGenerationJob } from './remote-job.ts';
import type { GenerationScope } from './services.ts';

/**
 * One job of the generation queue (PostgreSQL), on whichever node fetched it: the first run of a
 * generation another node accepted, or a takeover of one whose node died or stopped. The attempt
 * writes itself on the row as its owner (the newest attempt wins: a slow node that lost its lease
 * finds the row another's at its commit, which then refuses), then runs the generation as a node
 * on SQLite does, on the same code path: a remote job its last owner had submitted is polled,
 * never submitted again; anything else runs from the start, from the plan stored with the row
 * (nothing was committed or charged for it). Resolves once the row is final or another
 * attempt holds it; rejects with HandedBack when this node stops first, so that pg-boss hands the
 * job to another node at once.
 */
export async function runQueuedGeneration(ctx: GenerationScope, job: QueuedGeneration): Promise<void> {
  const id = job.generationId;
  // Final already (canceled while queued, or finished by an attempt that lost its lease to this
  // one's predecessor), or gone: the job is done.
  if (!(await claimGeneration(ctx.db, id, job.attempt))) return;
  const row = await getGeneration(ctx.db, id);
  if (!row || isFinal(row.status)) return;
  const taken = await take(ctx, row, job.attempt, job.synchronous);
  if (taken === null) return;
  const stopWatching = ctx.watch.watch(id, job);
  try {
    const outcome = await taken.settled;
    if (outcome === 'stopped') throw new HandedBack(id);
  } finally {
    stopWatching();
  }
}

/**
 * Starts the generation's run on this node (wrapped: an async function's promise of a promise
 * would wait for the run); null when it cannot run any more (then it is final).
 */
async function take(
  ctx: GenerationScope,
  row: GenerationRow,
  attempt: string,
  synchronous: boolean,
): Promise<{ settled: Promise<Settled> } | null> {
  const jobs = await unfinishedProviderJobs(ctx.db, row.id);
  if (jobs.length === 1 && !severalJobs(row)) {
    ctx.logger.info(`taking over generation ${row.id}: polling its ${jobs[0]!.providerId} job`);
    const follow = followed(ctx, row.id, attempt);
    const work = resumeGenerationJob(ctx, jobs[0]!, {
      step: follow.step,
      commit: follow.commit,
      signal: follow.signal,
    });
    return { settled: settle(ctx, row.id, work, follow.cancel) };
  }
  // Remote variations (one job per item): the run below polls each job as its item (launch finds
  // them) and submits only the items without one.
  const fail = async (message: string) => {
    await dropProviderJobs(ctx, jobs);
    if (await endGeneration(ctx.db, row.id, 'failed', { type: 'invalid_request_error', message }, ctx.clock.now()))
      await finished(ctx, row.id);
    return null;
  };
  const auth = await keyById(ctx.db, row.key_id);
  if (!auth) return fail('the generation cannot run: the key that made it was revoked');
  let plan: GenerationPlan;
  try {
    plan = await planOfRow(ctx, auth, row);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return fail(`the generation cannot run: its request no longer runs here (${why})`);
  }
  if (row.status !== 'queued') {
    ctx.logger.info(`taking over generation ${row.id} (${row.operation}): running it again from the start`);
    await updateGenerationStep(ctx.db, row.id, 'queued', ctx.clock.now());
  }
  return { settled: launch(ctx, auth, row, plan, attempt, synchronous) };
}
