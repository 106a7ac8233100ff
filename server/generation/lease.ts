import type { ServiceContext } from '../context.ts';

/**
 * A generation this node no longer owns: on PostgreSQL another node took it over from the queue
 * (this one was too slow to heartbeat, or was thought dead), or it ended elsewhere. The work here
 * stops without writing anything: no end state, no charge, and a remote job is neither canceled
 * at its provider nor forgotten, since the new owner polls it.
 */
export class LeaseLost extends Error {
  constructor(id: string) {
    super(`generation ${id} is run by another node now`);
    this.name = 'LeaseLost';
  }
}

/**
 * Whether work that stopped goes on elsewhere (the service is stopping, and the generation is
 * resumed or handed back; or another node holds it now): its provider job must then stay
 * recorded and running.
 */
export function leftToAnother(ctx: Pick<ServiceContext, 'shutdown'>, signal?: AbortSignal, error?: unknown): boolean {
  return ctx.shutdown.aborted || signal?.reason instanceof LeaseLost || error instanceof LeaseLost;
}
