import type { GenerationPlan, GenerationResponse } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import { openGenerations } from '../storage/generations.ts';
import type { GenerationRow } from '../storage/generations.ts';
import { launch } from './async-generation.ts';
import { resumeInProcess } from './resume-in-process.ts';
import { enqueueOrFail } from './store-request.ts';
import { runInRequest } from './in-request.ts';
import { resumeProviderJobs } from './remote-job.ts';
import type { GenerationScope, SynchronousRequest } from './services.ts';
import { runQueuedSynchronously } from './sync-generation.ts';

/**
 * How generations run, chosen once when the service is wired (the Generations object's strategy,
 * generations.ts; docs/architecture.md, "Runners"): in the process that accepted them (SQLite, one
 * node), or as jobs of the generation queue that any node may run (PostgreSQL). Both give the same answers.
 */
export interface RunStrategy {
  /** A synchronous request's answer, or its error. */
  synchronous(
    scope: GenerationScope,
    auth: AuthenticatedKey,
    request: SynchronousRequest,
    hangUp: AbortSignal,
  ): Promise<{ body: GenerationResponse; replayed: boolean }>;
  /** An asynchronous generation just stored with its plan: started here, or queued for a node. */
  start(scope: GenerationScope, auth: AuthenticatedKey, row: GenerationRow, plan: GenerationPlan): Promise<void>;
  /** On start, before the service listens: the generations and provider jobs a previous run left. */
  resumeLeft(scope: GenerationScope): Promise<{ generations: number; providerJobs: number }>;
}

/**
 * One node (SQLite, the embedded Local engine): a synchronous request runs in its request, an
 * asynchronous generation in the background of this process, and a start resumes what the
 * previous run left, here.
 */
export const inProcess: RunStrategy = {
  synchronous: runInRequest,
  start: (scope, auth, row, plan) => {
    void launch(scope, auth, row, plan);
    return Promise.resolve();
  },
  resumeLeft: resumeInProcess,
};

/**
 * Several nodes (PostgreSQL): every generation, synchronous or not, is a row and a job of the
 * queue, which any node's worker runs (queued-generation.ts); the request waits for the row to end
 * (sync-generation.ts) or answers 202.
 */
export function throughQueue(queue: GenerationQueue): RunStrategy {
  return {
    synchronous: (scope, auth, request, hangUp) => runQueuedSynchronously(scope, queue, auth, request, hangUp),
    start: (scope, _auth, row) => enqueueOrFail(scope, queue, row.id),
    resumeLeft: async (scope) => {
      // Open generations belong to the queue, not to the node that starts (another may be running
      // them). Each has its job (one per generation: queueing it again is a no-op, and covers a
      // node that died between the row and the job); a job whose node died is retried once its
      // heartbeat lapses. Synchronous requests' provider jobs resume here as before.
      for (const row of await openGenerations(scope.db))
        await queue.enqueue(row.id, { synchronous: row.synchronous === 1 });
      return { generations: 0, providerJobs: await resumeProviderJobs(scope, undefined, { queued: true }) };
    },
  };
}
