export type ToastTone = 'error' | 'success' | 'info';

export interface ToastAction {
  label: string;
  run: () => void;
}

export interface Toast {
  id: number;
  tone: ToastTone;
  title: string;
  message: string;
  action?: ToastAction;
}

export interface ToastsState {
  /** Oldest first; the newest is the one a collapsed stack shows. */
  toasts: Toast[];
  nextId: number;
  /** The creator opened the stack ("+N more"): every toast shows until it is collapsed again. */
  expanded: boolean;
}

export const initialState: ToastsState = { toasts: [], nextId: 1, expanded: false };

/** At most this many are kept; older ones give way. */
export const MAX_TOASTS = 20;

/** Success and info toasts fade after this long; errors stay until dismissed. */
export const AUTO_DISMISS_MS = 5000;
