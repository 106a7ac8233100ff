import type { AppInfo, ProfileList, Reconciliation, Settings, UsageState } from '../../../../shared/ipc/index.ts';
import type { LoadStatus } from '../models/initialState.ts';

export interface SettingsState {
  status: LoadStatus;
  error: string | null;
  /** Whether main answered at all: false shows the "not connected" screen. */
  connected: boolean | null;
  app: AppInfo | null;
  settings: Settings | null;
  profiles: ProfileList;
  usage: UsageState | null;
  usageError: string | null;
  usageLoading: boolean;
  /** The ledger against `/usage` (docs/workflows.md): the total of finished jobs, what was charged but not delivered. */
  reconciliation: Reconciliation | null;
  /** Jobs whose Recover is running. */
  recovering: string[];
  /** Field name → message from the last failed save. */
  fieldErrors: Record<string, string>;
  savingKey: boolean;
}

export const initialState: SettingsState = {
  status: 'idle',
  error: null,
  connected: null,
  app: null,
  settings: null,
  profiles: { activeId: null, profiles: [] },
  usage: null,
  usageError: null,
  usageLoading: false,
  reconciliation: null,
  recovering: [],
  fieldErrors: {},
  savingKey: false,
};
