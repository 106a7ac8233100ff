import { keyById } from '../auth/api-keys.ts';
import type { GenerationPlan } from '../../shared/api/index.ts';
import { endGeneration, openGenerations, updateGenerationStep } from '../storage/generations.ts';
import { unfinishedProviderJobs } from '../storage/provider-jobs.ts';
import { finished, followed, launch, settle, severalJobs } from './async-generation.ts';
import type { Followed } from './async-generation.ts';
import { Canceled } from './lease.ts';
import { dropProviderJobs, resumeProviderJobs } from './remote-job.ts';
import { planOfRow } from './request-plan.ts';
import type { GenerationScope } from './services.ts';

/**
 * On start, before the service listens, on one node (SQLite): every generation a previous run left
 * queued or running is resumed here. A remote job the provider had accepted resumes through provider_jobs (polled, never
 * submitted again); remote variations (one job per item) run again with their jobs, each polled as
 * its item and only the items without one submitted; anything else runs from the start, from its
 * stored plan (nothing was committed or charged for it). One that
 * cannot run any more ends `failed`.
 */
export async function resumeInProcess(ctx: GenerationScope): Promise<{ generations: number; providerJobs: number }> {
  const open = await openGenerations(ctx.db);
  const linked = new Set<string>();
  const follows = new Map<string, Followed>();
  const providerJobs = await resumeProviderJobs(ctx, {
    follow: (generationId) => {
      const row = open.find((g) => g.id === generationId);
      // One of several jobs (remote variations: one per item): the generation's own run polls it.
      if (row && severalJobs(row)) return undefined;
      const follow = followed(ctx, generationId);
      // Its generation has ended already (canceled just before the stop): the job is canceled.
      if (!row) {
        follow.cancel.abort(new Canceled());
        ctx.cancels.delete(generationId);
      } else follows.set(generationId, follow);
      return { step: follow.step, commit: follow.commit, signal: follow.signal };
    },
    resumed: (generationId, work) => {
      const follow = follows.get(generationId);
      if (!follow) return;
      linked.add(generationId);
      void settle(ctx, generationId, work, follow.cancel);
    },
  });
  for (const row of open) {
    if (linked.has(row.id)) continue;
    const fail = async (message: string) => {
      // Its jobs (remote variations) are not polled by anything now: not paid for.
      if (severalJobs(row)) await dropProviderJobs(ctx, await unfinishedProviderJobs(ctx.db, row.id));
      if (await endGeneration(ctx.db, row.id, 'failed', { type: 'invalid_request_error', message }, ctx.clock.now()))
        await finished(ctx, row.id);
    };
    const auth = await keyById(ctx.db, row.key_id);
    if (!auth) {
      await fail('the generation cannot resume after the restart: the key that made it was revoked');
      continue;
    }
    let plan: GenerationPlan;
    try {
      plan = await planOfRow(ctx, auth, row);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      await fail(`the generation cannot resume after the restart: its request no longer runs here (${why})`);
      continue;
    }
    await updateGenerationStep(ctx.db, row.id, 'queued', ctx.clock.now());
    ctx.logger.info(`resuming generation ${row.id} (${row.operation}) from the start after a restart`);
    void launch(ctx, auth, row, plan);
  }
  return { generations: open.length, providerJobs };
}
