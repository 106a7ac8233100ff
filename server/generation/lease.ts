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

/** What ends the run of a canceled generation; its commit refuses, so nothing is stored or charged. */
export class Canceled extends Error {
  constructor() {
    super('the generation was canceled');
    this.name = 'Canceled';
  }
}

/**
 * Whether work that stopped goes on elsewhere (the service is stopping — `shutdown` — and the
 * generation is resumed or handed back; or another node holds it now): its provider job must then
 * stay recorded and running.
 */
export function leftToAnother(shutdown: AbortSignal, signal?: AbortSignal, error?: unknown): boolean {
  return shutdown.aborted || signal?.reason instanceof LeaseLost || error instanceof LeaseLost;
}
