import { useToasts } from '../stores/toasts/index.ts';
import type { Toast } from '../stores/toasts/initialState.ts';
import './toasts.css';

function ToastView({ toast }: { toast: Toast }) {
  const { dismiss, hold, release } = useToasts.getState();
  return (
    <div
      className={`toast toast-${toast.tone}`}
      role={toast.tone === 'error' ? 'alert' : 'status'}
      onMouseEnter={() => hold(toast.id)}
      onMouseLeave={() => release(toast.id)}
      onFocus={() => hold(toast.id)}
      onBlur={() => release(toast.id)}
    >
      <div className="toast-head">
        <strong className="toast-title">{toast.title}</strong>
        <button type="button" className="icon-btn" aria-label="Dismiss notification" onClick={() => dismiss(toast.id)}>
          ×
        </button>
      </div>
      {toast.message && <p className="toast-message">{toast.message}</p>}
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
    </div>
  );
}

/**
 * The notifications, in the sidebar's free space above the profile: there they never cover the
 * Generate bar or a screen's controls. A stack collapses to its newest toast and says how many
 * more wait behind it; success toasts fade by themselves (the store's timers), errors stay.
 */
export function Toasts() {
  const toasts = useToasts((s) => s.toasts);
  const expanded = useToasts((s) => s.expanded);
  const setExpanded = useToasts((s) => s.setExpanded);
  const hidden = toasts.length - 1;
  const shown = expanded ? toasts : toasts.slice(-1);
  return (
    <section className="toasts" aria-label="Notifications">
      {hidden > 0 && (
        <button type="button" className="toasts-more" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
          {expanded ? 'Show only the newest' : `+${hidden} more`}
        </button>
      )}
      {shown.map((t) => (
        <ToastView key={t.id} toast={t} />
      ))}
    </section>
  );
}
