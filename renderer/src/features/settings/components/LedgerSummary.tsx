import { formatPrice } from '../../../lib/format.ts';
import { useSettings } from '../../../stores/settings/index.ts';

const REASON = {
  download: 'charged, the download did not finish',
  response: 'the service made its result, which the app never received',
} as const;

/**
 * The app's ledger against the service's `/usage` (docs/workflows.md): the total of the finished jobs, and
 * what was charged but not delivered, with the jobs it concerns and Recover.
 */
export function LedgerSummary() {
  const r = useSettings((s) => s.reconciliation);
  const recovering = useSettings((s) => s.recovering);
  const recover = useSettings((s) => s.recover);
  if (!r) return null;
  return (
    <>
      <div className="row faint">
        <span className="grow">Total cost (finished jobs)</span>
        <strong style={{ color: 'var(--text)' }} aria-label="Total cost">
          {formatPrice(r.total)}
        </strong>
      </div>
      {r.notDelivered > 0 && (
        <div className="notice notice-warning ledger-gap" role="region" aria-label="Charged but not delivered">
          <div className="row">
            <strong className="grow">Charged but not delivered</strong>
            <strong>{formatPrice(r.notDelivered)}</strong>
          </div>
          {r.jobs.length === 0 && (
            <p className="field-help">
              The service charged more than the app saw on {r.differences.map((d) => d.day).join(', ')}, and its records
              name no job of this app for it.
            </p>
          )}
          <ul className="ledger-jobs">
            {r.jobs.map((j) => (
              <li key={j.jobId} className="row">
                <span className="grow">
                  <span className="job-prompt" title={j.prompt}>
                    {j.prompt || j.jobId}
                  </span>
                  <span className="faint">
                    {' '}
                    · {j.day} · {j.state} · {REASON[j.reason]}
                    {j.price !== null ? ` · ${formatPrice(j.price)}` : ''}
                  </span>
                </span>
                <button
                  type="button"
                  className="btn btn-small"
                  disabled={recovering.includes(j.jobId)}
                  aria-label={`Recover ${j.prompt || j.jobId}`}
                  onClick={() => void recover(j.jobId)}
                >
                  {recovering.includes(j.jobId) ? 'Recovering…' : 'Recover'}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {r.otherKeys > 0 && (
        <div className="row faint">
          <span className="grow">Other keys of this account (CLI, other machines)</span>
          <span>{formatPrice(r.otherKeys)}</span>
        </div>
      )}
    </>
  );
}
