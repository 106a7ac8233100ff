import { create } from 'zustand';
import { errorMessage } from '../../lib/ipc.ts';
import { AUTO_DISMISS_MS, initialState, MAX_TOASTS, type Toast, type ToastsState } from './initialState.ts';

export interface ToastsActions {
  push: (toast: Omit<Toast, 'id'>) => number;
  dismiss: (id: number) => void;
  /** An error toast whose text is the service's own message. */
  error: (title: string, error: unknown, action?: Toast['action']) => number;
  setExpanded: (expanded: boolean) => void;
  /** The pointer or focus is on a toast: it does not fade while it is being read. */
  hold: (id: number) => void;
  /** …and fades a full interval after it is left. */
  release: (id: number) => void;
  reset: () => void;
}

export type ToastsStore = ToastsState & ToastsActions;

export const useToasts = create<ToastsStore>()((set, get) => {
  // The timers live here, not in the views: a collapsed stack shows only the newest toast, and the
  // ones behind it must fade on time too.
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  const clearTimer = (id: number): void => {
    const timer = timers.get(id);
    if (timer !== undefined) clearTimeout(timer);
    timers.delete(id);
  };
  const startTimer = (id: number): void => {
    clearTimer(id);
    timers.set(
      id,
      setTimeout(() => get().dismiss(id), AUTO_DISMISS_MS),
    );
  };
  return {
    ...initialState,
    push(toast) {
      const id = get().nextId;
      set((s) => {
        const toasts = [...s.toasts, { ...toast, id }];
        for (const dropped of toasts.slice(0, Math.max(0, toasts.length - MAX_TOASTS))) clearTimer(dropped.id);
        return { nextId: s.nextId + 1, toasts: toasts.slice(-MAX_TOASTS) };
      });
      if (toast.tone !== 'error') startTimer(id);
      return id;
    },
    dismiss(id) {
      clearTimer(id);
      set((s) => {
        const toasts = s.toasts.filter((t) => t.id !== id);
        return { toasts, expanded: toasts.length > 1 && s.expanded };
      });
    },
    error(title, error, action) {
      return get().push({ tone: 'error', title, message: errorMessage(error), ...(action ? { action } : {}) });
    },
    setExpanded(expanded) {
      set({ expanded });
    },
    hold(id) {
      clearTimer(id);
    },
    release(id) {
      const toast = get().toasts.find((t) => t.id === id);
      if (toast && toast.tone !== 'error') startTimer(id);
    },
    reset() {
      for (const id of [...timers.keys()]) clearTimer(id);
      set(initialState);
    },
  };
});

/** For stores: report a failure without a React hook. */
export function toastError(title: string, error: unknown, action?: Toast['action']): void {
  useToasts.getState().error(title, error, action);
}
export function toastSuccess(title: string, message = ''): void {
  useToasts.getState().push({ tone: 'success', title, message });
}
