import type { GenerationRunner } from '../context.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import { openGenerations } from '../storage/generations.ts';
import { launch } from './async-generation.ts';
import { resumeInProcess } from './resume-in-process.ts';
import { enqueueOrFail } from './store-request.ts';
import { runInRequest } from './in-request.ts';
import { resumeProviderJobs } from './remote-job.ts';
import { runQueuedSynchronously } from './sync-generation.ts';

/**
 * One node (SQLite, the embedded Local engine): a synchronous request runs in its request, an
 * asynchronous generation in the background of this process, and a start resumes what the
 * previous run left, here.
 */
export const inProcessRunner: GenerationRunner = {
  synchronous: runInRequest,
  start: (ctx, auth, row, plan) => {
    void launch(ctx, auth, row, plan);
    return Promise.resolve();
  },
  resumeLeft: resumeInProcess,
};

/**
 * Several nodes (PostgreSQL): every generation, synchronous or not, is a row and a job of the
 * queue, which any node's worker runs (queued-generation.ts); the request waits for the row to end
 * (sync-generation.ts) or answers 202.
 */
export function queueRunner(queue: GenerationQueue): GenerationRunner {
  return {
    synchronous: (ctx, auth, request, hangUp) => runQueuedSynchronously(ctx, queue, auth, request, hangUp),
    start: (ctx, _auth, row) => enqueueOrFail(ctx, queue, row.id),
    resumeLeft: async (ctx) => {
      // Open generations belong to the queue, not to the node that starts (another may be running
      // them). Each has its job (one per generation: queueing it again is a no-op, and covers a
      // node that died between the row and the job); a job whose node died is retried once its
      // heartbeat lapses. Synchronous requests' provider jobs resume here as before.
      for (const row of await openGenerations(ctx.db))
        await queue.enqueue(row.id, { synchronous: row.synchronous === 1 });
      return { generations: 0, providerJobs: await resumeProviderJobs(ctx, undefined, { queued: true }) };
    },
  };
}
