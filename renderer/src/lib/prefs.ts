/**
 * UI preferences (theme, prompt history, view options) are the only state the renderer keeps;
 * everything durable lives in main. localStorage is per origin, which in browser mode is per port,
 * so losing it costs nothing important.
 */
const PREFIX = 'clipdesk.';

export function loadPref<T>(key: string, fallback: T): T {
  try {
    const raw = globalThis.localStorage?.getItem(PREFIX + key);
    return raw === null || raw === undefined ? fallback : (JSON.parse(raw) as T);
  } catch {
    return fallback;
  }
}

export function savePref(key: string, value: unknown): void {
  try {
    globalThis.localStorage?.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Storage full or disabled: preferences are a convenience.
  }
}
