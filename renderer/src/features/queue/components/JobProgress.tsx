import type { Job } from '../../../../../shared/ipc/index.ts';
import { useQueue } from '../store/index.ts';
import { isFinished, progressFraction, slotFreesInSeconds } from '../store/selectors.ts';

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

/** Where an unfinished job is: waiting for a rate-limit slot, transferring, or generating. */
export function JobProgress({ job, now }: { job: Job; now: number }) {
  const stats = useQueue((s) => s.stats);
  const waitSeconds = job.state === 'queued' ? slotFreesInSeconds({ stats }, job.waitingUntil, now) : null;
  return (
    <>
      {waitSeconds !== null && (
        <div className="notice notice-info" style={{ padding: '4px 8px' }} role="status">
          Slot frees in {waitSeconds}s
        </div>
      )}
      {(job.upload || job.download) && !isFinished(job) && (
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
    </>
  );
}
