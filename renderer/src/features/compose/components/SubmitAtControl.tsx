import { useNow } from '../../../lib/useNow.ts';
import { useCompose } from '../../../stores/compose/index.ts';

/** An ISO time as a `datetime-local` value (local time, to the minute). */
function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/**
 * "Submit at…" (docs/workflows.md): the next Generate waits in the queue for this time ("Scheduled for …",
 * with "Submit now" there). Empty = submit at once. A `datetime-local` value is local time, so
 * `new Date(value)` reads it as the creator meant it.
 */
export function SubmitAtControl() {
  const submitAt = useCompose((s) => s.submitAt);
  const setSubmitAt = useCompose((s) => s.setSubmitAt);
  const now = useNow(60_000, true);
  return (
    <div className="submit-at" role="group" aria-label="Submit at">
      <label htmlFor="submit-at" className="faint" style={{ fontSize: 12 }}>
        Submit at…
      </label>
      <div className="row" style={{ gap: 4, flexWrap: 'nowrap' }}>
        <input
          id="submit-at"
          className="input"
          style={{ height: 32 }}
          type="datetime-local"
          min={toLocalInput(now)}
          value={submitAt ? toLocalInput(Date.parse(submitAt)) : ''}
          onChange={(e) => {
            const at = e.target.value ? new Date(e.target.value).getTime() : NaN;
            setSubmitAt(Number.isFinite(at) ? new Date(at).toISOString() : null);
          }}
        />
        {submitAt && (
          <button
            type="button"
            className="icon-btn"
            aria-label="Submit at once instead"
            onClick={() => setSubmitAt(null)}
          >
            ×
          </button>
        )}
      </div>
    </div>
  );
}
