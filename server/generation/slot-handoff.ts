/**
 * What a synchronous request holds for its queued generation (sync-generation.ts): its storage
 * reservation and its concurrency slot, taken before the row so that the request is refused at
 * once as it always was (the quota's 429, the concurrency 429). When the queue gives the job to
 * this same node, the run takes them over and releases them when its work has stopped (its items
 * stored, its files removed), as a run in the request always did. When another node runs the
 * job, the request keeps them until the row ends, and that node's run takes none of its own.
 */
export interface Held {
  /** Releases the concurrency slot (idempotent). */
  slot: () => void;
  /** Releases the storage reservation (idempotent). */
  unreserve: () => void;
}

/** What the synchronous requests of one running service offer their runs on this node (generations.ts holds it). */
export class SlotHandoff {
  private readonly offered = new Map<string, Held>();

  /** Offers the generation's slot and reservation to a run on this node; returns the request's release. */
  offer(generationId: string, held: Held): () => void {
    const map = this.offered;
    map.set(generationId, held);
    return () => {
      // Still here: no run on this node took them.
      if (map.get(generationId) === held) {
        map.delete(generationId);
        held.slot();
        held.unreserve();
      }
    };
  }

  /** The run on this node takes what its request offered; undefined when the request is on another node. */
  take(generationId: string): Held | undefined {
    const held = this.offered.get(generationId);
    this.offered.delete(generationId);
    return held;
  }
}
