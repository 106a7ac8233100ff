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
  const unexplained = r.differences.filter((d) => d.unexplained > 0);
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
      {r.otherClients > 0 && (
        <div className="row faint">
          <span className="grow">Made with this app’s key by other clients (CLI, scripts)</span>
          <span aria-label="Other clients">{formatPrice(r.otherClients)}</span>
        </div>
      )}
      {unexplained.length > 0 && (
        <p className="field-help">
          The service charged the app’s key{' '}
          {unexplained.map((d) => `${formatPrice(d.unexplained)} on ${d.day}`).join(', ')} that neither this app’s jobs
          nor the items on the service account for (items deleted since, or made by another client).
        </p>
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
