import { useEffect, useState } from 'react';
import type { ChainView, LibraryItem } from '../../../../../shared/ipc/index.ts';
import { ipc } from '../../../lib/ipc.ts';

/**
 * The shot chain of the open item (docs/workflows.md), read again whenever the item's entry changes (a new
 * shot, a trim: main announces both with library.changed, which replaces the entry).
 */
export function useChain(entry: LibraryItem): ChainView | null {
  const [read, setRead] = useState<{ id: string; chain: ChainView | null } | null>(null);
  useEffect(() => {
    let live = true;
    const id = entry.item.id;
    // A chain is extra information: when it cannot be read, the panel shows none.
    Promise.resolve()
      .then(() => ipc().library.chain({ id }))
      .then(
        (chain) => live && setRead({ id, chain }),
        () => live && setRead({ id, chain: null }),
      );
    return () => {
      live = false;
    };
  }, [entry]);
  // Until the open item's own chain arrives, none (never the previous item's).
  return read?.id === entry.item.id ? read.chain : null;
}
