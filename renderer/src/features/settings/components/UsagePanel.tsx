import { useEffect } from 'react';
import { RATE_WINDOWS } from '../../../../../shared/api/constants.ts';
import { formatBytes } from '../../../lib/format.ts';
import { useSettings } from '../../../stores/settings/index.ts';
import { usageFraction } from '../../../stores/settings/selectors.ts';
import { LedgerSummary } from './LedgerSummary.tsx';

/** A meter when both figures are known; nothing otherwise. */
function OptionalMeter(props: {
  label: string;
  used: number | undefined;
  limit: number | undefined;
  format?: (n: number) => string;
}) {
  const { used, limit, ...rest } = props;
  if (used === undefined || limit === undefined) return null;
  return <Meter {...rest} used={used} limit={limit} />;
}

function Meter({
  label,
  used,
  limit,
  format = String,
}: {
  label: string;
  used: number;
  limit: number;
  format?: (n: number) => string;
}) {
  const f = usageFraction(used, limit);
  return (
    <div className="meter">
      <div className="meter-head">
        <span>{label}</span>
        <span>
          {format(used)} / {format(limit)}
        </span>
      </div>
      <div
        className="progress"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={limit}
        aria-valuenow={used}
      >
        <span
          style={{
            width: `${f * 100}%`,
            background: f > 0.9 ? 'var(--danger)' : f > 0.7 ? 'var(--warning)' : undefined,
          }}
        />
      </div>
    </div>
  );
}

export function UsagePanel() {
  const usage = useSettings((s) => s.usage);
  const error = useSettings((s) => s.usageError);
  const loading = useSettings((s) => s.usageLoading);
  const loadUsage = useSettings((s) => s.loadUsage);
  useEffect(() => {
    void loadUsage();
  }, [loadUsage]);
  const u = usage?.usage;
  const rl = usage?.rateLimit;
  return (
    <section className="panel" aria-labelledby="usage-h" aria-busy={loading}>
      <div className="panel-head">
        <h3 id="usage-h">Tier, limits and usage</h3>
        <button type="button" className="btn btn-small btn-ghost" onClick={() => void loadUsage()} disabled={loading}>
          Refresh usage
        </button>
      </div>
      {loading && !u && <div className="skeleton" style={{ height: 120 }} role="status" aria-label="Loading usage" />}
      {error && (
        <div className="notice notice-error" role="alert">
          <span className="grow">{error}</span>
          <button
            type="button"
            className="btn btn-small"
            onClick={() => document.querySelector<HTMLInputElement>('input[type=password]')?.focus()}
          >
            Fix the key
          </button>
        </div>
      )}
      {u && (
        <>
          <div className="row">
            {u.tier !== undefined && (
              <span className="badge badge-accent" style={{ textTransform: 'capitalize', fontSize: 13, height: 24 }}>
                {u.tier} tier
              </span>
            )}
            {u.limits?.retentionDays !== undefined && (
              <span className="faint">Retention {u.limits.retentionDays} days</span>
            )}
          </div>
          {/* Another service may send only part of this (docs/api.md "Extensions"): each meter it has the figures for. */}
          {RATE_WINDOWS.map((w) => (
            <OptionalMeter
              key={w}
              label={`Requests this ${w}`}
              used={u.usage?.requests?.[w]}
              limit={u.limits?.rate?.[w]}
            />
          ))}
          <OptionalMeter label="Running videos" used={u.usage?.running?.video} limit={u.limits?.concurrency?.video} />
          <OptionalMeter label="Running images" used={u.usage?.running?.image} limit={u.limits?.concurrency?.image} />
          <OptionalMeter
            label="Storage"
            used={u.usage?.storageBytes}
            limit={u.limits?.storageBytes}
            format={formatBytes}
          />
          {(u.tier === undefined || u.limits === undefined || u.usage === undefined) && (
            <p className="faint" role="note">
              This service reports only part of its usage; shown is what it sent.
            </p>
          )}
          {/* The total is the app's ledger (the finished jobs); the account's counter, which also
              holds other keys and undelivered charges, is only the reconciliation's input. */}
          <LedgerSummary />
          {rl && (
            <div className="notice notice-info" role="status" aria-label="Rate-limit state">
              {rl.remaining !== null && rl.limit !== null
                ? `${rl.remaining} of ${rl.limit} requests left`
                : 'No rate-limit headers seen yet'}
              {rl.waitMs > 0 ? ` · next request in ${Math.ceil(rl.waitMs / 1000)}s` : ''}
              {rl.reset !== null ? ` · resets ${new Date(rl.reset * 1000).toLocaleTimeString()}` : ''}
            </div>
          )}
        </>
      )}
    </section>
  );
}
