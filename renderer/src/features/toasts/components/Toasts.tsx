import { useEffect } from 'react';
import { useToasts } from '../store/index.ts';
import type { Toast } from '../store/initialState.ts';
import '../toasts.css';

const AUTO_DISMISS_MS = 8000;

function ToastView({ toast }: { toast: Toast }) {
  const dismiss = useToasts((s) => s.dismiss);
  useEffect(() => {
    if (toast.tone === 'error') return undefined;
    const timer = setTimeout(() => dismiss(toast.id), AUTO_DISMISS_MS);
    return () => clearTimeout(timer);
  }, [toast.id, toast.tone, dismiss]);
  return (
    <div className={`toast toast-${toast.tone}`} role={toast.tone === 'error' ? 'alert' : 'status'}>
      <div className="toast-body">
        <strong className="toast-title">{toast.title}</strong>
        {toast.message && <p className="toast-message">{toast.message}</p>}
      </div>
      {toast.action && (
        <button
          type="button"
          className="btn btn-small"
          onClick={() => {
            toast.action?.run();
            dismiss(toast.id);
          }}
        >
          {toast.action.label}
        </button>
      )}
      <button type="button" className="icon-btn" aria-label="Dismiss notification" onClick={() => dismiss(toast.id)}>
        ×
      </button>
    </div>
  );
}

export function Toasts() {
  const toasts = useToasts((s) => s.toasts);
  return (
    <section className="toasts" aria-label="Notifications">
      {toasts.map((t) => (
        <ToastView key={t.id} toast={t} />
      ))}
    </section>
  );
}
