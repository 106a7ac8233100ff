// Which screen the shell shows. Features navigate through it (Regenerate → Compose, Fix API key →
// Settings), so it lives in lib/ rather than in the shell they must not import.
import { create } from 'zustand';
import { initialState, SCREENS, type Screen, type ShellState } from './initialState.ts';

export interface ShellActions {
  go: (screen: Screen) => void;
  reset: () => void;
}

export const useShell = create<ShellState & ShellActions>()((set) => ({
  ...initialState,
  go(screen) {
    set({ screen });
  },
  reset() {
    set(initialState);
  },
}));

/** Ctrl/Cmd+1..4 → the screen in the sidebar's order. */
export function screenForShortcut(key: string): Screen | null {
  const n = Number(key);
  return Number.isInteger(n) && n >= 1 && n <= SCREENS.length ? (SCREENS[n - 1] ?? null) : null;
}
