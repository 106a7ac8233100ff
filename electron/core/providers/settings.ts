import { PROVIDER_KEY_IDS, type ProviderKeyId } from '../../../shared/ipc/schemas/providers.ts';
import type { SettingsStore, StoredProviderSettings } from '../settings/index.ts';

/**
 * The Local engine's provider switches and base URLs, in the settings file beside the other
 * settings (electron-store in the app, `conf` in browser mode and the CLI). Base URLs are checked
 * by the IPC schema (http(s) only) before they get here.
 */
export interface ProviderSettingsView {
  disabled: ProviderKeyId[];
  baseUrls: Partial<Record<ProviderKeyId, string>>;
}

export interface ProviderSettings {
  get(): ProviderSettingsView;
  enabled(id: ProviderKeyId): boolean;
  baseUrl(id: ProviderKeyId): string | null;
  setEnabled(id: ProviderKeyId, enabled: boolean): void;
  setBaseUrl(id: ProviderKeyId, url: string | null): void;
}

const isId = (id: string): id is ProviderKeyId => (PROVIDER_KEY_IDS as readonly string[]).includes(id);

export function createProviderSettings(store: SettingsStore): ProviderSettings {
  // A hand-edited file may hold anything: only known ids and string URLs count.
  const get = (): ProviderSettingsView => {
    const raw: Partial<StoredProviderSettings> = store.get('providers') ?? {};
    const disabled = Array.isArray(raw.disabled) ? raw.disabled.filter(isId) : [];
    const baseUrls: Partial<Record<ProviderKeyId, string>> = {};
    for (const [id, url] of Object.entries(raw.baseUrls ?? {}))
      if (isId(id) && typeof url === 'string' && /^https?:\/\//.test(url)) baseUrls[id] = url;
    return { disabled, baseUrls };
  };
  const save = (next: ProviderSettingsView): void =>
    store.set('providers', { disabled: [...next.disabled], baseUrls: { ...next.baseUrls } });
  return {
    get,
    enabled: (id) => !get().disabled.includes(id),
    baseUrl: (id) => get().baseUrls[id] ?? null,
    setEnabled(id, enabled) {
      const current = get();
      const others = current.disabled.filter((d) => d !== id);
      save({ ...current, disabled: enabled ? others : [...others, id] });
    },
    setBaseUrl(id, url) {
      const current = get();
      const baseUrls = { ...current.baseUrls };
      if (url === null) delete baseUrls[id];
      else baseUrls[id] = url;
      save({ ...current, baseUrls });
    },
  };
}
