import ElectronStore from 'electron-store';
import {
  defaultSettingsFile,
  SETTINGS_FILE_NAME,
  type SettingsFile,
  type SettingsStore,
} from '../../core/settings/index.ts';

/**
 * The app's settings: electron-store (the product's design names it), in `settings.json` in the
 * user data folder, the same file and format the CLI reads through `conf` (core/settings). The
 * core sees it only as a SettingsStore. Built here because electron-store loads `electron`.
 */
export function createElectronSettingsStore(userData: string): SettingsStore {
  return new ElectronStore<SettingsFile>({ cwd: userData, name: SETTINGS_FILE_NAME, defaults: defaultSettingsFile() });
}
