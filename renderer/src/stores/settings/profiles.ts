import type { ProfileList } from '../../../../shared/ipc/index.ts';
import { ipc } from '../../lib/ipc.ts';
import { toastError, toastSuccess } from '../toasts/index.ts';
import type { SettingsSlice } from './actions.ts';

function replaceProfile(profiles: ProfileList, profile: ProfileList['profiles'][number]): ProfileList {
  const exists = profiles.profiles.some((p) => p.id === profile.id);
  return {
    ...profiles,
    profiles: exists
      ? profiles.profiles.map((p) => (p.id === profile.id ? profile : p))
      : [...profiles.profiles, profile],
  };
}

/** The service profiles: which is active, their budgets and keys (a key goes to main, never here). */
export const createProfilesSlice: SettingsSlice<
  'loadProfiles' | 'setBudget' | 'createProfile' | 'activateProfile' | 'removeProfile' | 'setKey' | 'removeKey'
> = (set, get) => ({
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
});
