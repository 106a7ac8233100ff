const isMac = typeof navigator !== 'undefined' && /Mac/i.test(navigator.platform);

/** The shortcut modifier as shown in labels: ⌘ on macOS, Ctrl+ elsewhere. */
export const MOD = isMac ? '⌘' : 'Ctrl+';
