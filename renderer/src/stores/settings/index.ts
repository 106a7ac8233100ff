import { create } from 'zustand';
import type { SettingsStore } from './actions.ts';
import { initialState } from './initialState.ts';
import { createPreferencesSlice } from './preferences.ts';
import { createProfilesSlice } from './profiles.ts';
import { createUsageSlice } from './usage.ts';

export type { SettingsActions, SettingsStore } from './actions.ts';
export { THEME_PREF } from './preferences.ts';

export const useSettings = create<SettingsStore>()((...store) => ({
  ...initialState,
  ...createPreferencesSlice(...store),
  ...createUsageSlice(...store),
  ...createProfilesSlice(...store),
  reset() {
    const [set] = store;
    set(initialState);
  },
}));
