export {
  createConfSettingsStore,
  defaultSettings,
  defaultSettingsFile,
  LOCAL_PROFILE_ID,
  SETTINGS_FILE_NAME,
} from './store.ts';
export type { SettingsFile, SettingsStore, StoredProfile, StoredProviderSettings } from './store.ts';
export {
  defaultDownloadDir,
  defaultEngineDataDir,
  defaultPicturesDir,
  defaultUserDataDir,
  imageDownloadDir,
} from './data-paths.ts';
