import type { ServiceContext } from '../context.ts';
import { getGeneration, isFinal } from '../storage/generations.ts';
import type { GenerationRow } from '../storage/generations.ts';
import { inJsonArray } from '../storage/sql/dialect.ts';

/**
 * Waiting for a generation to end: a synchronous request on PostgreSQL waits for its queued job,
 * which any node may run (sync-generation.ts). The node that ends a generation wakes its own
 * waiters at once (`generationEnded`, from finished()); one that another node ended is found by a
 * look at every awaited row, in one statement per node, every LOOK_MS while any are awaited: up
 * to 100 ms late (a LISTEN channel would make it immediate; the relay of provider webhooks,
 * webhook-relay.ts, has the connection for it).
 */
export const LOOK_MS = 100;

interface Waiting {
  wakers: Map<string, Set<() => void>>;
  timer?: NodeJS.Timeout;
  looking?: boolean;
}

/** Per running service: keyed by its context object, whatever part of it a caller names. */
const states = new WeakMap<object, Waiting>();

function stateOf(ctx: Pick<ServiceContext, 'db'>): Waiting {
  let state = states.get(ctx);
  if (!state) {
    state = { wakers: new Map() };
    states.set(ctx, state);
  }
  return state;
}

/** Wakes this node's waiters of `id` (it has just ended here). */
export function generationEnded(ctx: Pick<ServiceContext, 'db'>, id: string): void {
  for (const wake of states.get(ctx)?.wakers.get(id) ?? []) wake();
}

/**
 * The generation's row once it is final (or gone), or null when `signal` aborts first. A failed
 * read of the row (the database lost) rejects.
 */
export async function untilEnded(
  ctx: Pick<ServiceContext, 'db'>,
  id: string,
  signal: AbortSignal,
): Promise<GenerationRow | undefined | null> {
  const state = stateOf(ctx);
  for (;;) {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let wakers = state.wakers.get(id);
    if (!wakers) state.wakers.set(id, (wakers = new Set()));
    wakers.add(wake);
    signal.addEventListener('abort', wake, { once: true });
    try {
      // Read after the waker is in place: an end between the read and the wait still wakes it.
      const row = await getGeneration(ctx.db, id);
      if (!row || isFinal(row.status)) return row;
      if (signal.aborted) return null;
      look(ctx, state);
      await woken;
      if (signal.aborted) return null;
    } finally {
      signal.removeEventListener('abort', wake);
      wakers.delete(wake);
      if (wakers.size === 0) state.wakers.delete(id);
      if (state.wakers.size === 0 && state.timer) {
        clearInterval(state.timer);
        state.timer = undefined;
      }
    }
  }
}

function look(ctx: Pick<ServiceContext, 'db'>, state: Waiting): void {
  if (state.timer) return;
  state.timer = setInterval(() => {
    if (state.looking || state.wakers.size === 0) return;
    state.looking = true;
    const ids = [...state.wakers.keys()];
    ctx.db
      .all<{ id: string }>(
        `SELECT id FROM generations WHERE ${inJsonArray(ctx.db.dialect, 'id')}
           AND status IN ('succeeded', 'failed', 'canceled')`,
        JSON.stringify(ids),
      )
      .then(
        (ended) => {
          for (const { id } of ended) generationEnded(ctx, id);
        },
        // Each waiter reads its row again when woken; a lost database surfaces there.
        () => {
          for (const id of ids) generationEnded(ctx, id);
        },
      )
      .finally(() => (state.looking = false));
  }, LOOK_MS);
  state.timer.unref();
}
