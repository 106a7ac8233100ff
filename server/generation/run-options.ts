import type { GenerationResponse } from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';
import type { ProviderJobRow } from '../storage/provider-jobs.ts';
import type { StepReport } from './finish.ts';
import type { RecordResult } from './idempotency.ts';

/** What commits with the items: an idempotency record (whose key a remote job keeps) or any other. */
export type Commit = RecordResult<GenerationResponse> | ((body: GenerationResponse, tx: Db) => Promise<void>);

/** How an asynchronous generation follows and stops its run (a synchronous one passes none). */
export interface RunOptions {
  /** Aborts the run (a cancel); default the service's lifetime. Must include ctx.shutdown. */
  signal?: AbortSignal;
  step?: StepReport;
  /** The generations row: a remote job's provider_jobs row names it, for the resume after a restart. */
  generationId?: string;
  /** A concurrency slot already taken (an asynchronous generation waited for it); released here. */
  slot?: () => void;
  /** A storage reservation already held (a synchronous request's, slot-handoff.ts); released here. */
  reservation?: () => void;
  /**
   * The plan was made just now (planFor, which reads the nodes' shared provider health), with
   * nothing waited for since: the run routes on that read rather than reading the table again, so
   * a generation reads it once (PostgreSQL). Unset (or after a wait for a concurrency slot), the run
   * reads it first, so that a cooldown another node started meanwhile counts.
   */
  healthReadForPlan?: boolean;
  /**
   * The provider jobs a previous run of this generation had submitted (remote video variations:
   * one per item, docs/providers.md): each is polled as its item, on the same provider, never
   * submitted again; only the items without one are submitted.
   */
  resume?: ProviderJobRow[];
}
