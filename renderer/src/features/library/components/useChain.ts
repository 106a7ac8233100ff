import type { ChainView, LibraryItem } from '../../../../../shared/ipc/index.ts';
import { useChainOf } from '../../../stores/chains/index.ts';

/**
 * The shot chain of the open item (docs/workflows.md), read again whenever the item's entry changes (a new
 * shot, a trim: main announces both with library.changed, which replaces the entry). The chains store
 * holds it, so the canvas's timeline and this panel show one chain.
 */
export function useChain(entry: LibraryItem): ChainView | null {
  return useChainOf(entry.item.id, entry);
}
