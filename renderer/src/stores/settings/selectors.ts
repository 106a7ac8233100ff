import type { Profile, Theme } from '../../../../shared/ipc/index.ts';
import type { SettingsState } from './initialState.ts';

export function activeProfile(state: Pick<SettingsState, 'profiles'>): Profile | undefined {
  const { activeId, profiles } = state.profiles;
  return profiles.find((p) => p.id === activeId) ?? profiles[0];
}

/** The theme actually shown: `system` follows the OS. */
export function resolveTheme(theme: Theme, prefersDark: boolean): 'light' | 'dark' {
  if (theme === 'system') return prefersDark ? 'dark' : 'light';
  return theme;
}

/** `••••1234`: the only form of a key the renderer ever shows. */
export function maskedKey(last4: string | null): string {
  return last4 ? `••••••••${last4}` : '••••••••';
}

const BACKEND_LABELS: Readonly<Record<string, string>> = {
  keychain: 'OS keychain',
  safeStorage: 'Encrypted app storage',
  file: 'Key file',
  env: 'Environment variable',
  none: 'No secure storage',
};

export function keyBackendLabel(backend: string): string {
  return BACKEND_LABELS[backend] ?? backend;
}

/** Fraction of a limit used, clamped to 0..1; 0 when the limit is 0 or unknown. */
export function usageFraction(used: number, limit: number): number {
  if (!Number.isFinite(limit) || limit <= 0) return 0;
  return Math.min(1, Math.max(0, used / limit));
}

export const NAMING_TOKENS = [
  '{yyyy}',
  '{mm}',
  '{dd}',
  '{model}',
  '{provider}',
  '{createdAt}',
  '{id}',
  '{ext}',
  '{prompt}',
];
