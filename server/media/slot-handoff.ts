import type { ServiceContext } from '../context.ts';

/**
 * A concurrency slot a synchronous request holds for its queued generation (sync-generation.ts),
 * handed to the run when the queue gives the job to this same node: the run then releases it when
 * its work has stopped (its files removed), as a synchronous run in the request always did, rather
 * than the request releasing it as soon as the row ends. When another node runs the job, the
 * request keeps the slot until the row ends (and that node's run holds none of its own).
 */
const handed = new WeakMap<ServiceContext, Map<string, () => void>>();

function slotsOf(ctx: ServiceContext): Map<string, () => void> {
  let map = handed.get(ctx);
  if (!map) handed.set(ctx, (map = new Map()));
  return map;
}

/** Offers the generation's slot to a run on this node; returns the request's release. */
export function offerSlot(ctx: ServiceContext, generationId: string, release: () => void): () => void {
  const slots = slotsOf(ctx);
  slots.set(generationId, release);
  return () => {
    // Still here: no run on this node took it.
    if (slots.get(generationId) === release) {
      slots.delete(generationId);
      release();
    }
  };
}

/** The run on this node takes the slot its request offered; undefined when the request is on another node. */
export function takeSlot(ctx: ServiceContext, generationId: string): (() => void) | undefined {
  const slots = slotsOf(ctx);
  const release = slots.get(generationId);
  slots.delete(generationId);
  return release;
}
