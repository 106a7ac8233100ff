import { useEffect } from 'react';
import { create } from 'zustand';
import type { ChainView } from '../../../../shared/ipc/index.ts';
import { ipc } from '../../lib/ipc.ts';
import { movedChain, type Trim } from './timeline.ts';

/**
 * Shot chains as main's library index holds them (docs/workflows.md, "Shot chains"), in the one shape
 * the contract gives (`ChainView`), read for whichever item a screen shows: the Library's chain strip
 * and trim fields, and the canvas's timeline. A move or a trim made on one is seen by the other.
 */
export interface ChainsState {
  /** The chain each item was last read in (an item in no chain: `chainId` null). */
  byItem: Record<string, ChainView>;
  /** Reads `itemId`'s chain again (a new shot, a trim or a move may have changed it). */
  load: (itemId: string) => Promise<ChainView | null>;
  /** Moves a shot to `position` (1-based): shown at once, then as main stored it; back as it was on failure. */
  move: (itemId: string, position: number) => Promise<void>;
  /** A shot's in and out points in its chain; null uses the whole clip. */
  setTrim: (itemId: string, trim: Trim | null) => Promise<void>;
  /**
   * Main said chains changed (a new shot, a trim, a move, a restore): screens showing one read it
   * again, and keep what they show until the new copy arrives (a timeline never blinks out under the keyboard).
   */
  invalidate: () => void;
  /** Bumped on every invalidate. */
  version: number;
  reset: () => void;
}

/** The chain under each of its shots' ids (and the item asked for), so any shot finds it. */
function filed(byItem: Record<string, ChainView>, chain: ChainView, asked: string): Record<string, ChainView> {
  const next = { ...byItem, [asked]: chain };
  for (const shot of chain.shots) next[shot.itemId] = chain;
  return next;
}

export const useChains = create<ChainsState>()((set, get) => ({
  byItem: {},
  version: 0,
  async load(itemId) {
    try {
      const chain = await ipc().library.chain({ id: itemId });
      set((s) => ({ byItem: filed(s.byItem, chain, itemId) }));
      return chain;
    } catch {
      // A chain is extra information: when it cannot be read, none is shown.
      return null;
    }
  },
  async move(itemId, position) {
    const before = get().byItem[itemId];
    if (before) set((s) => ({ byItem: filed(s.byItem, movedChain(before, itemId, position), itemId) }));
    try {
      const chain = await ipc().library.moveShot({ id: itemId, position });
      set((s) => ({ byItem: filed(s.byItem, chain, itemId) }));
    } catch (error) {
      if (before) set((s) => ({ byItem: filed(s.byItem, before, itemId) }));
      throw error;
    }
  },
  async setTrim(itemId, trim) {
    const chain = await ipc().library.setShotTrim(trim ? { id: itemId, ...trim } : { id: itemId, clear: true });
    set((s) => ({ byItem: filed(s.byItem, chain, itemId) }));
  },
  invalidate() {
    set((s) => ({ version: s.version + 1 }));
  },
  reset() {
    set({ byItem: {}, version: 0 });
  },
}));

/**
 * The chain of `itemId`, read when the item changes, when `refresh` changes (a new copy of the item)
 * and after main says chains changed; null until the item's own arrives (never another item's).
 */
export function useChainOf(itemId: string | null, refresh?: unknown): ChainView | null {
  const version = useChains((s) => s.version);
  const chain = useChains((s) => (itemId ? s.byItem[itemId] : undefined));
  useEffect(() => {
    if (itemId) void useChains.getState().load(itemId);
  }, [itemId, refresh, version]);
  return itemId ? (chain ?? null) : null;
}
