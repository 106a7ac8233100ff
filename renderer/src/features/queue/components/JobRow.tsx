import type { Job } from '../../../../../shared/ipc/index.ts';
import { formatElapsed, formatPrice } from '../../../lib/format.ts';
import { useShell } from '../../../lib/shell/index.ts';
import { useCompose } from '../../compose/store/index.ts';
import { useQueue } from '../store/index.ts';
import { elapsedSeconds, isFinished, progressFraction, slotFreesInSeconds, stateLabel } from '../store/selectors.ts';

function Bar({ label, progress }: { label: string; progress: { done: number; total: number | null } }) {
  const fraction = progressFraction(progress);
  return (
    <>
      <span>{label}</span>
      <div
        className={`progress${fraction === null ? ' indeterminate' : ''}`}
        role="progressbar"
        aria-label={`${label} progress`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={fraction === null ? undefined : Math.round(fraction * 100)}
      >
        <span style={{ width: `${Math.round((fraction ?? 0) * 100)}%` }} />
      </div>
    </>
  );
}

const TONE: Record<Job['state'], string> = {
  queued: '',
  uploading: 'badge-accent',
  generating: 'badge-accent',
  downloading: 'badge-accent',
  done: 'badge-success',
  failed: 'badge-danger',
  canceled: '',
};

export function JobRow({
  job,
  index,
  queuedCount,
  now,
}: {
  job: Job;
  index: number | null;
  queuedCount: number;
  now: number;
}) {
  const busy = useQueue((s) => s.busy.includes(job.id));
  const stats = useQueue((s) => s.stats);
  const { cancel, retry, reorder, dismiss } = useQueue.getState();
  const go = useShell((s) => s.go);
  const finished = isFinished(job);
  const waitSeconds = job.state === 'queued' ? slotFreesInSeconds({ stats }, job.waitingUntil, now) : null;
  const r = job.request;
  const editAndRetry = () => {
    useCompose.getState().applySettings({
      media: r.kind,
      prompt: r.prompt,
      modelId: null,
      params: { duration: r.duration, size: r.size, style: r.style, aspect_ratio: r.aspect_ratio, public: r.public },
      provider: r.provider ?? null,
    });
    go('compose');
  };
  return (
    <li className="job" aria-label={`Job: ${r.prompt}`}>
      <div
        className="job-pos"
        aria-label={index !== null ? `Position ${index + 1} in the queue` : stateLabel(job, now)}
      >
        {index !== null
          ? index + 1
          : job.state === 'done'
            ? '✓'
            : job.state === 'failed'
              ? '!'
              : job.state === 'canceled'
                ? '–'
                : '▶'}
      </div>
      <div className="job-body">
        <div className="row" style={{ flexWrap: 'nowrap' }}>
          <span className={`badge ${TONE[job.state]}`} data-testid="job-state">
            {stateLabel(job, now)}
          </span>
          <span className="job-prompt" title={r.prompt}>
            {r.prompt}
          </span>
        </div>
        <div className="job-meta">
          <span>{r.model}</span>
          <span>{r.kind === 'video' ? `${r.duration ?? 'default'}s` : 'image'}</span>
          {r.size && <span>{r.size}</span>}
          <span>{r.provider ? `pinned: ${r.provider}` : r.routing}</span>
          {r.startFrame && <span>start frame</span>}
          <span>Elapsed {formatElapsed(elapsedSeconds(job, now))}</span>
          {job.attempts > 1 && <span>{job.attempts} attempts</span>}
          {job.result?.price != null && <span>{formatPrice(job.result.price)}</span>}
        </div>
        {waitSeconds !== null && (
          <div className="notice notice-info" style={{ padding: '4px 8px' }} role="status">
            Slot frees in {waitSeconds}s
          </div>
        )}
        {(job.upload || job.download) && !finished && (
          <div className="job-transfers">
            {job.upload && <Bar label="Upload" progress={job.upload} />}
            {job.download && <Bar label="Download" progress={job.download} />}
          </div>
        )}
        {job.state === 'generating' && !job.upload && !job.download && (
          <div className="progress indeterminate" role="progressbar" aria-label="Generating">
            <span />
          </div>
        )}
        {job.state === 'failed' && job.error && (
          <div className="notice notice-error" role="alert">
            <span className="grow">
              <strong>{job.error.code}</strong>: {job.error.message}
            </span>
          </div>
        )}
      </div>
      <div className="job-actions">
        {job.state === 'queued' && (
          <>
            <button
              type="button"
              className="icon-btn"
              aria-label="Move up"
              disabled={busy || index === 0}
              onClick={() => void reorder(job.id, (index ?? 0) - 1)}
            >
              ↑
            </button>
            <button
              type="button"
              className="icon-btn"
              aria-label="Move down"
              disabled={busy || index === queuedCount - 1}
              onClick={() => void reorder(job.id, (index ?? 0) + 1)}
            >
              ↓
            </button>
          </>
        )}
        {!finished && (
          <button
            type="button"
            className="btn btn-small btn-danger"
            disabled={busy}
            onClick={() => void cancel(job.id)}
          >
            Cancel
          </button>
        )}
        {(job.state === 'failed' || job.state === 'canceled') && (
          <>
            <button type="button" className="btn btn-small" disabled={busy} onClick={() => void retry(job.id)}>
              Retry
            </button>
            <button type="button" className="btn btn-small btn-ghost" onClick={editAndRetry}>
              Edit
            </button>
          </>
        )}
        {job.state === 'done' && (
          <button type="button" className="btn btn-small" onClick={() => go('library')}>
            Open in Library
          </button>
        )}
        {finished && (
          <button
            type="button"
            className="icon-btn"
            aria-label="Remove from list"
            disabled={busy}
            onClick={() => void dismiss(job.id)}
          >
            ×
          </button>
        )}
      </div>
    </li>
  );
}
