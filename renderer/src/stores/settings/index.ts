import { create } from 'zustand';
import type { PathSetting, ProfileList, SettingsPatch } from '../../../../shared/ipc/index.ts';
import { errorCode, errorMessage, ipc } from '../../lib/ipc.ts';
import { savePref } from '../../lib/prefs.ts';
import { toastError, toastSuccess } from '../toasts/index.ts';
import { initialState, type SettingsState } from './initialState.ts';

/** Codes that say the shell could not be reached or could not answer, rather than refused. */
const NOT_CONNECTED = new Set(['network_error', 'not_found', 'internal_error', 'invalid_response']);

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

export const THEME_PREF = 'theme';

function withoutField(errors: Record<string, string>, field: string): Record<string, string> {
  const next = { ...errors };
  delete next[field];
  return next;
}

export const useSettings = create<SettingsStore>()((set, get) => {
  function replaceProfile(profiles: ProfileList, profile: ProfileList['profiles'][number]): ProfileList {
    const exists = profiles.profiles.some((p) => p.id === profile.id);
    return {
      ...profiles,
      profiles: exists
        ? profiles.profiles.map((p) => (p.id === profile.id ? profile : p))
        : [...profiles.profiles, profile],
    };
  }
  return {
    ...initialState,
    async load() {
      set({ status: 'loading', error: null });
      try {
        const [app, settings, profiles] = await Promise.all([
          ipc().app.info(),
          ipc().settings.get(),
          ipc().profiles.list(),
        ]);
        savePref(THEME_PREF, settings.theme);
        set({ status: 'ready', connected: true, app, settings, profiles });
      } catch (error) {
        const code = errorCode(error);
        set({
          status: 'error',
          error: errorMessage(error),
          connected: !NOT_CONNECTED.has(code ?? ''),
        });
      }
    },
    async loadUsage() {
      set({ usageLoading: true, usageError: null });
      const reconciled = get().loadReconciliation();
      try {
        set({ usage: await ipc().usage.get(), usageLoading: false });
      } catch (error) {
        set({ usageError: errorMessage(error), usageLoading: false });
      }
      await reconciled;
    },
    async loadReconciliation() {
      try {
        set({ reconciliation: await ipc().usage.reconcile() });
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
    async setBudget(id, daily, monthly) {
      try {
        const profile = await ipc().profiles.setBudget({ id, daily, monthly });
        set((s) => ({ profiles: replaceProfile(s.profiles, profile) }));
        toastSuccess('Budget saved', profile.name);
        return true;
      } catch (error) {
        toastError('Could not save the budget', error);
        return false;
      }
    },
    async loadProfiles() {
      try {
        set({ profiles: await ipc().profiles.list() });
      } catch (error) {
        toastError('Could not load profiles', error);
      }
    },
    async update(patch) {
      const previous = get().settings;
      if (previous) set({ settings: { ...previous, ...patch } });
      if (patch.theme) savePref(THEME_PREF, patch.theme);
      try {
        const settings = await ipc().settings.update(patch);
        const fieldErrors = { ...get().fieldErrors };
        for (const k of Object.keys(patch)) delete fieldErrors[k];
        set({ settings, fieldErrors });
        return true;
      } catch (error) {
        const fieldErrors = { ...get().fieldErrors };
        for (const k of Object.keys(patch)) fieldErrors[k] = errorMessage(error);
        set({ settings: previous, fieldErrors });
        return false;
      }
    },
    async choosePath(field) {
      try {
        const { settings } = await ipc().settings.choosePath({ field });
        set({ settings, fieldErrors: withoutField(get().fieldErrors, field) });
      } catch (error) {
        set({ fieldErrors: { ...get().fieldErrors, [field]: errorMessage(error) } });
      }
    },
    async checkPath(field, path) {
      try {
        const checked = await ipc().settings.checkPath({ field, path });
        set({ fieldErrors: withoutField(get().fieldErrors, field) });
        return checked.path;
      } catch (error) {
        set({ fieldErrors: { ...get().fieldErrors, [field]: errorMessage(error) } });
        return null;
      }
    },
    async setPath(field, path) {
      try {
        const settings = await ipc().settings.setPath({ field, path });
        set({ settings, fieldErrors: withoutField(get().fieldErrors, field) });
        return true;
      } catch (error) {
        set({ fieldErrors: { ...get().fieldErrors, [field]: errorMessage(error) } });
        return false;
      }
    },
    async createProfile(input) {
      try {
        const profile = await ipc().profiles.create(input);
        set((s) => ({ profiles: replaceProfile(s.profiles, profile) }));
        toastSuccess('Profile added', profile.name);
        return true;
      } catch (error) {
        toastError('Could not add the profile', error);
        return false;
      }
    },
    async activateProfile(id) {
      try {
        await ipc().profiles.activate({ id });
        set((s) => ({ profiles: { ...s.profiles, activeId: id }, usage: null }));
        void get().loadUsage();
      } catch (error) {
        toastError('Could not switch profile', error);
      }
    },
    async removeProfile(id) {
      try {
        set({ profiles: await ipc().profiles.remove({ id }) });
      } catch (error) {
        toastError('Could not remove the profile', error);
      }
    },
    async setKey(id, key) {
      set({ savingKey: true });
      try {
        const status = await ipc().profiles.setKey({ id, key });
        set((s) => ({
          savingKey: false,
          profiles: {
            ...s.profiles,
            profiles: s.profiles.profiles.map((p) => (p.id === id ? { ...p, key: status } : p)),
          },
        }));
        toastSuccess(
          'API key saved',
          `Stored in ${status.backend === 'keychain' ? 'the OS keychain' : status.backend}. It will not be shown again.`,
        );
        void get().loadUsage();
        return true;
      } catch (error) {
        set({ savingKey: false });
        toastError('Could not save the key', error);
        return false;
      }
    },
    async removeKey(id) {
      try {
        const status = await ipc().profiles.removeKey({ id });
        set((s) => ({
          profiles: {
            ...s.profiles,
            profiles: s.profiles.profiles.map((p) => (p.id === id ? { ...p, key: status } : p)),
          },
        }));
      } catch (error) {
        toastError('Could not remove the key', error);
      }
    },
    reset() {
      set(initialState);
    },
  };
});
