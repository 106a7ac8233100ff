import type { StateCreator } from 'zustand';
import type { PathSetting, SettingsPatch } from '../../../../shared/ipc/index.ts';
import type { SettingsState } from './initialState.ts';

export interface SettingsActions {
  load: () => Promise<void>;
  loadUsage: () => Promise<void>;
  /** Charged-failure reconciliation (docs/workflows.md); loadUsage runs it too. */
  loadReconciliation: () => Promise<void>;
  /** Downloads a charged, undelivered job's media from the service. */
  recover: (jobId: string) => Promise<void>;
  /** Spending caps in USD (null: none) of a profile. */
  setBudget: (id: string, daily: number | null, monthly: number | null) => Promise<boolean>;
  loadProfiles: () => Promise<void>;
  update: (patch: SettingsPatch) => Promise<boolean>;
  /** The app: main opens the native dialog and stores the choice; the page never names the path. */
  choosePath: (field: PathSetting) => Promise<void>;
  /** Browser mode: main checks a typed path; the real path to confirm, or null (the reason is in fieldErrors). */
  checkPath: (field: PathSetting, path: string) => Promise<string | null>;
  /** Browser mode, after the user confirmed; null restores the default (both modes). */
  setPath: (field: PathSetting, path: string | null) => Promise<boolean>;
  createProfile: (input: { name: string; baseUrl: string; key?: string }) => Promise<boolean>;
  activateProfile: (id: string) => Promise<void>;
  removeProfile: (id: string) => Promise<void>;
  /** The key goes to main and is never kept here; only `last4` comes back. */
  setKey: (id: string, key: string) => Promise<boolean>;
  removeKey: (id: string) => Promise<void>;
  reset: () => void;
}

export type SettingsStore = SettingsState & SettingsActions;

/**
 * One part of the store (docs/architecture.md, "Layout"): made with the whole store's `set` and
 * `get`, as zustand's slices pattern has it, and spread into `useSettings`.
 */
export type SettingsSlice<K extends keyof SettingsStore> = StateCreator<SettingsStore, [], [], Pick<SettingsStore, K>>;
