import { errorCode, errorMessage, ipc } from '../../lib/ipc.ts';
import { savePref } from '../../lib/prefs.ts';
import type { SettingsSlice } from './actions.ts';

/** Codes that say the shell could not be reached or could not answer, rather than refused. */
const NOT_CONNECTED = new Set(['network_error', 'not_found', 'internal_error', 'invalid_response']);

export const THEME_PREF = 'theme';

function withoutField(errors: Record<string, string>, field: string): Record<string, string> {
  const next = { ...errors };
  delete next[field];
  return next;
}

/**
 * The app's settings: the first load (with the app's info and the profiles, which tells whether
 * main answers at all), saves, and the folders; a refused save shows as the field's error.
 */
export const createPreferencesSlice: SettingsSlice<'load' | 'update' | 'choosePath' | 'checkPath' | 'setPath'> = (
  set,
  get,
) => ({
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
});
