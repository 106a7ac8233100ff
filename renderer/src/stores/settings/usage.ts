import { withDeadline } from '../../lib/deadline.ts';
import { errorMessage, ipc } from '../../lib/ipc.ts';
import { toastError, toastSuccess } from '../toasts/index.ts';
import type { SettingsSlice } from './actions.ts';

/** The active profile's usage, and the ledger's reconciliation of it (docs/workflows.md). */
export const createUsageSlice: SettingsSlice<'loadUsage' | 'loadReconciliation' | 'recover'> = (set, get) => ({
  async loadUsage() {
    set({ usageLoading: true, usageError: null });
    const reconciled = get().loadReconciliation();
    try {
      set({ usage: await withDeadline(ipc().usage.get(), 'The usage'), usageLoading: false });
    } catch (error) {
      set({ usageError: errorMessage(error), usageLoading: false });
    }
    await reconciled;
  },
  async loadReconciliation() {
    try {
      set({ reconciliation: await withDeadline(ipc().usage.reconcile(), 'The reconciliation') });
    } catch {
      // The usage error above says what is wrong with the service; the ledger's view waits.
    }
  },
  async recover(jobId) {
    set((s) => ({ recovering: [...s.recovering, jobId] }));
    try {
      set({ reconciliation: await ipc().usage.recover({ jobId }) });
      toastSuccess('Recovered', 'The media were saved to your download folder.');
    } catch (error) {
      toastError('Could not recover the job', error);
    } finally {
      set((s) => ({ recovering: s.recovering.filter((id) => id !== jobId) }));
    }
  },
});
