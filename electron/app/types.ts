import type { ContractProcedure, InferSchemaInput, InferSchemaOutput } from '@orpc/contract';
import type { IpcContract } from '../../shared/ipc/contract.ts';
import type { ApiClient } from '../core/api/index.ts';
import type { DownloadManager } from '../core/downloads/index.ts';
import type { JobQueue } from '../core/jobs/index.ts';
import type { Ledger } from '../core/ledger/index.ts';
import type { LibraryStore, LibrarySync, RetentionGuard } from '../core/library/index.ts';
import type { Uploader } from '../core/uploads/index.ts';

/** Who is calling. Set by the binding, never by the caller. */
export interface IpcContext {
  transport: 'electron' | 'http';
}

/** What a handler receives besides its input: the binding's context and the call's abort signal. */
export interface HandlerContext extends IpcContext {
  signal: AbortSignal | undefined;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- matching oRPC's generic procedure shape */
type HandlerFor<P> =
  P extends ContractProcedure<infer I, infer O, any, any>
    ? (input: InferSchemaOutput<I>, ctx: HandlerContext) => Promise<InferSchemaInput<O>> | InferSchemaInput<O>
    : never;
/* eslint-enable @typescript-eslint/no-explicit-any */

/** One domain's handlers: a function for every action of the contract. */
export type DomainHandlers<D extends keyof IpcContract> = {
  [A in keyof IpcContract[D]]: HandlerFor<IpcContract[D][A]>;
};

/** The whole handler map. A missing or extra route is a compile error. */
export type IpcHandlers = { [D in keyof IpcContract]: DomainHandlers<D> };

/** The active profile's session, opened on first use (handlers take this, not a session). */
export type SessionGetter = () => Promise<ServiceSession>;

/**
 * Everything bound to one profile (one service + one account): its client, uploads, downloads,
 * job queue and library index. Switching profiles disposes the session and builds the next one;
 * each profile keeps its own journal and index under `<data>/profiles/<id>/`.
 */
export interface ServiceSession {
  readonly profileId: string;
  readonly api: ApiClient;
  readonly uploader: Uploader;
  readonly downloads: DownloadManager;
  readonly queue: JobQueue;
  readonly library: LibraryStore;
  readonly sync: LibrarySync;
  readonly guard: RetentionGuard;
  /** What this profile's jobs were charged (docs/workflows.md). */
  readonly ledger: Ledger;
  /** The last 4 characters of the key in use, as last read (the ledger records it per charge). */
  keyLast4(): Promise<string | null>;
  /** "Submit once anyway": the job starts even though it passes a budget. */
  exemptFromBudget(jobId: string): void;
  dispose(): Promise<void>;
}
