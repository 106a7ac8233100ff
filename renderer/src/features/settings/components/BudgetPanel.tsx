import { useId, useState } from 'react';
import type { Profile } from '../../../../../shared/ipc/index.ts';
import { useSettings } from '../../../stores/settings/index.ts';

/** A typed cap: empty is no cap; otherwise a positive amount in USD, or an error. */
function parseCap(text: string): { value: number | null } | { error: string } {
  const t = text.trim().replace(/^\$/, '');
  if (t === '') return { value: null };
  const n = Number(t);
  if (!Number.isFinite(n) || n <= 0) return { error: 'Enter an amount in USD above 0, or leave it empty for no cap.' };
  return { value: n };
}

const shown = (n: number | null | undefined): string => (n == null ? '' : String(n));

/**
 * Spending caps of the active profile (docs/workflows.md). A job whose price would pass one waits in the
 * queue with "Over today's budget"; raising the cap here lets it start.
 */
export function BudgetPanel() {
  const profiles = useSettings((s) => s.profiles);
  const profile: Profile | undefined = profiles.profiles.find((p) => p.id === profiles.activeId);
  if (!profile) return null;
  const { daily, monthly } = profile.budget ?? { daily: null, monthly: null };
  // Keyed by what is stored: another profile, or a saved change, starts the fields afresh.
  return <BudgetForm key={`${profile.id}:${daily}:${monthly}`} profile={profile} />;
}

function BudgetForm({ profile }: { profile: Profile }) {
  const setBudget = useSettings((s) => s.setBudget);
  const dailyId = useId();
  const monthlyId = useId();
  const [daily, setDaily] = useState(shown(profile.budget?.daily));
  const [monthly, setMonthly] = useState(shown(profile.budget?.monthly));
  const [error, setError] = useState<string | null>(null);
  const save = async () => {
    const d = parseCap(daily);
    const m = parseCap(monthly);
    if ('error' in d || 'error' in m) {
      setError('error' in d ? d.error : 'error' in m ? m.error : null);
      return;
    }
    setError(null);
    await setBudget(profile.id, d.value, m.value);
  };
  return (
    <section className="panel" aria-labelledby="budget-h">
      <div className="panel-head">
        <h3 id="budget-h">Budget</h3>
        <span className="faint">{profile.name}</span>
      </div>
      <p className="field-help">
        Jobs that would pass a cap wait in the queue until you raise it or submit them once anyway. Empty: no cap.
      </p>
      <form
        className="budget-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="field" htmlFor={dailyId}>
          <span className="field-label">Daily cap (USD)</span>
          <input
            id={dailyId}
            className="input"
            inputMode="decimal"
            placeholder="No cap"
            value={daily}
            onChange={(e) => setDaily(e.target.value)}
          />
        </label>
        <label className="field" htmlFor={monthlyId}>
          <span className="field-label">Monthly cap (USD)</span>
          <input
            id={monthlyId}
            className="input"
            inputMode="decimal"
            placeholder="No cap"
            value={monthly}
            onChange={(e) => setMonthly(e.target.value)}
          />
        </label>
        <button type="submit" className="btn btn-small">
          Save budget
        </button>
      </form>
      {error && (
        <p className="field-help field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
