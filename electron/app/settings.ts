import Conf from 'conf';
import { Settings, SettingsPatch, DEFAULT_NAMING_PATTERN } from '../../shared/ipc/schemas/settings.ts';

/**
 * Durable app settings (not profiles, not keys): one JSON file in the data directory, through
 * `conf` — the same format electron-store writes, so the app and browser mode share it.
 */
export interface SettingsStore {
  get(): Settings;
  update(patch: SettingsPatch): Settings;
  onChange(listener: (settings: Settings) => void): () => void;
}

export function defaultSettings(downloadDir: string): Settings {
  return {
    theme: 'system',
    downloadDir,
    namingPattern: DEFAULT_NAMING_PATTERN,
    retentionPolicy: 'favourites',
    retentionWarnDays: 3,
    ffmpegPath: null,
    notifications: true,
  };
}

export function createSettingsStore(options: { dataDir: string; defaultDownloadDir: string }): SettingsStore {
  const conf = new Conf<Record<string, unknown>>({ cwd: options.dataDir, configName: 'settings', clearInvalidConfig: true });
  const defaults = defaultSettings(options.defaultDownloadDir);
  const listeners = new Set<(s: Settings) => void>();
  // Unknown or broken values fall back to the default one by one, never failing the whole file.
  const read = (): Settings => {
    const stored = conf.store;
    const out: Record<string, unknown> = { ...defaults };
    for (const key of Object.keys(defaults)) {
      if (!Object.hasOwn(stored, key)) continue;
      const field = Settings.shape[key as keyof Settings];
      const parsed = field.safeParse(stored[key]);
      if (parsed.success) out[key] = parsed.data;
    }
    return Settings.parse(out);
  };
  return {
    get: read,
    update(patch) {
      const valid = SettingsPatch.parse(patch);
      const next = Settings.parse({ ...read(), ...valid });
      conf.store = next;
      for (const l of listeners) l(next);
      return next;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
