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
  toasts: Toast[];
  nextId: number;
}

export const initialState: ToastsState = { toasts: [], nextId: 1 };

/** At most this many stay on screen; older ones give way. */
export const MAX_TOASTS = 4;
