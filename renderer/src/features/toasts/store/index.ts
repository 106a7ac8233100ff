import { create } from 'zustand';
import { errorMessage } from '../../../lib/ipc.ts';
import { initialState, MAX_TOASTS, type Toast, type ToastsState } from './initialState.ts';

export interface ToastsActions {
  push: (toast: Omit<Toast, 'id'>) => number;
  dismiss: (id: number) => void;
  /** An error toast whose text is the service's own message. */
  error: (title: string, error: unknown, action?: Toast['action']) => number;
  reset: () => void;
}

export type ToastsStore = ToastsState & ToastsActions;

export const useToasts = create<ToastsStore>()((set, get) => ({
  ...initialState,
  push(toast) {
    const id = get().nextId;
    set((s) => ({ nextId: s.nextId + 1, toasts: [...s.toasts, { ...toast, id }].slice(-MAX_TOASTS) }));
    return id;
  },
  dismiss(id) {
    set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) }));
  },
  error(title, error, action) {
    return get().push({ tone: 'error', title, message: errorMessage(error), ...(action ? { action } : {}) });
  },
  reset() {
    set(initialState);
  },
}));

/** For stores: report a failure without a React hook. */
export function toastError(title: string, error: unknown, action?: Toast['action']): void {
  useToasts.getState().error(title, error, action);
}
export function toastSuccess(title: string, message = ''): void {
  useToasts.getState().push({ tone: 'success', title, message });
}
