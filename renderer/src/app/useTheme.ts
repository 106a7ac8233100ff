import { useEffect, useSyncExternalStore } from 'react';
import type { Theme } from '../../../shared/ipc/index.ts';
import { loadPref } from '../lib/prefs.ts';
import { useSettings, THEME_PREF } from '../stores/settings/index.ts';
import { resolveTheme } from '../stores/settings/selectors.ts';

const query =
  typeof window !== 'undefined' && window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;

function subscribe(onChange: () => void): () => void {
  query?.addEventListener('change', onChange);
  return () => query?.removeEventListener('change', onChange);
}

/** Applies the theme from settings (or the last one seen, before settings load) to <html>. */
export function useTheme(): void {
  const theme = useSettings((s) => s.settings?.theme) ?? loadPref<Theme>(THEME_PREF, 'dark');
  const prefersDark = useSyncExternalStore(
    subscribe,
    () => query?.matches ?? true,
    () => true,
  );
  useEffect(() => {
    document.documentElement.dataset['theme'] = resolveTheme(theme, prefersDark);
  }, [theme, prefersDark]);
}
