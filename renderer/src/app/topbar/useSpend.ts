import { create } from 'zustand';
import type { Spend } from '../../../../shared/ipc/index.ts';
import { ipc } from '../../lib/ipc.ts';

interface SpendState {
  spend: Spend | null;
  load: () => Promise<void>;
}

/**
 * The ledger's spend today and this month, for the top bar. Read again when a job ends (its charge
 * is in the ledger then) and when the profile changes; a failed read keeps the last figures.
 */
export const useSpend = create<SpendState>()((set) => ({
  spend: null,
  async load() {
    try {
      set({ spend: await ipc().usage.spend() });
    } catch {
      // Not connected: the shell's own notice says so; the meter keeps what it had.
    }
  },
}));
