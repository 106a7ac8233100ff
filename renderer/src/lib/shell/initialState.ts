export const SCREENS = ['compose', 'queue', 'library', 'settings'] as const;
export type Screen = (typeof SCREENS)[number];

export interface ShellState {
  screen: Screen;
}

export const initialState: ShellState = { screen: 'compose' };

export const SCREEN_LABELS: Readonly<Record<Screen, string>> = {
  compose: 'Compose',
  queue: 'Queue',
  library: 'Library',
  settings: 'Settings',
};
