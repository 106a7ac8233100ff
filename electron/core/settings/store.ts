import Conf from 'conf';
import type { Settings } from '../../../shared/ipc/index.ts';
import { DEFAULT_NAMING_PATTERN } from '../downloads/naming.ts';
import { defaultDownloadDir } from './data-paths.ts';

/**
 * The settings file: profiles and durable settings (never a key: keys live in the keychain).
 * The Electron app keeps it in electron-store (electron/main/platform/settings-store.ts); the CLI
 * and browser mode in `conf`. Both write the same JSON file (`settings.json` in the user data
 * folder), so the app and the CLI share it, and the core sees either through this interface.
 */
export interface StoredProfile {
  id: string;
  name: string;
  kind: 'local' | 'remote';
  baseUrl: string;
  /** Spending caps in USD (docs/workflows.md); absent: none. */
  budget?: { daily: number | null; monthly: number | null };
}

/**
 * The Local engine's provider switches and base URLs (Settings → Providers). Keys are not here:
 * they are in the keychain (core/providers/key-store.ts).
 */
export type StoredProviderSettings = {
  /** Provider ids switched off. */
  disabled: string[];
  /** Provider id → API base URL, where the user overrode the SDK's. */
  baseUrls: Record<string, string>;
};

// A type alias, not an interface: conf wants a Record, and keyof stays these keys.
export type SettingsFile = {
  activeId: string;
  profiles: StoredProfile[];
  settings: Settings;
  /** Absent until the user first changes a provider's switch or base URL. */
  providers?: StoredProviderSettings;
};

/** The part of conf's (and electron-store's, which extends it) API the core uses. */
export interface SettingsStore {
  get<K extends keyof SettingsFile>(key: K): SettingsFile[K];
  set<K extends keyof SettingsFile>(key: K, value: SettingsFile[K]): void;
  /** The file's absolute path (for `clipdesk doctor` and support). */
  readonly path: string;
}

/** The file's name without `.json`, in the user data folder. */
export const SETTINGS_FILE_NAME = 'settings';

export const LOCAL_PROFILE_ID = 'local';

export function defaultSettings(): Settings {
  return {
    theme: 'system',
    downloadDir: defaultDownloadDir(),
    namingPattern: DEFAULT_NAMING_PATTERN,
    retentionPolicy: 'favourites',
    retentionWarnDays: 2,
    ffmpegPath: null,
    notifications: true,
  };
}

/** What a new settings file holds: the Local engine as the only, active profile. */
export function defaultSettingsFile(): SettingsFile {
  return {
    activeId: LOCAL_PROFILE_ID,
    profiles: [{ id: LOCAL_PROFILE_ID, name: 'Local engine', kind: 'local', baseUrl: '' }],
    settings: defaultSettings(),
  };
}

/** The CLI's and browser mode's store: `conf`, in `dir`. */
export function createConfSettingsStore(dir: string): SettingsStore {
  return new Conf<SettingsFile>({
    cwd: dir,
    configName: SETTINGS_FILE_NAME,
    projectName: 'clipdesk',
    defaults: defaultSettingsFile(),
  });
}
