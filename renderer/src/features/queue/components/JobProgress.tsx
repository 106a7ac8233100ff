import type { Job } from '../../../../../shared/ipc/index.ts';
import { useQueue } from '../store/index.ts';
import { formatDate } from '../../../lib/format.ts';
import { holdText, isFinished, progressFraction, slotFreesInSeconds } from '../store/selectors.ts';

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

/** The service's step as the queue names it: Queued, Generating, Transcoding, Thumbnail, Storing… */
function stepName(step: NonNullable<Job['generation']>['step']): string {
  return step === 'queued' ? 'Queued at the provider' : step.charAt(0).toUpperCase() + step.slice(1);
}

/** Where an unfinished job is: waiting for a rate-limit slot, transferring, or generating. */
export function JobProgress({ job, now }: { job: Job; now: number }) {
  const stats = useQueue((s) => s.stats);
  const hold = holdText(job, stats, now, formatDate);
  const waitSeconds =
    job.state === 'queued' && !hold ? slotFreesInSeconds({ stats }, job.waitingUntil, now, job.request.kind) : null;
  return (
    <>
      {hold && (
        <div className="notice notice-info" style={{ padding: '4px 8px' }} role="status" aria-label="Why it waits">
          {hold}
        </div>
      )}
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
      {job.state === 'generating' && job.generation && (
        <div className="job-step" role="status" aria-label="Step">
          <span className="job-step-name">{stepName(job.generation.step)}</span>
          {job.generation.queuePosition !== null && (
            <span className="faint"> · queue position {job.generation.queuePosition}</span>
          )}
          {job.generation.progress !== null && (
            <span className="faint"> · {Math.round(job.generation.progress * 100)}%</span>
          )}
        </div>
      )}
      {job.state === 'generating' && job.generation?.wait && Date.parse(job.generation.wait.until) > now && (
        <div className="notice notice-info" style={{ padding: '4px 8px' }} role="status" aria-label="Rate limited">
          Rate limited: waiting {Math.max(1, Math.ceil((Date.parse(job.generation.wait.until) - now) / 1000))}s before{' '}
          {job.generation.wait.what}
        </div>
      )}
      {job.state === 'generating' && !job.upload && !job.download && (
        <div
          className={`progress${job.generation?.progress != null ? '' : ' indeterminate'}`}
          role="progressbar"
          aria-label="Generating"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={job.generation?.progress != null ? Math.round(job.generation.progress * 100) : undefined}
        >
          <span
            style={job.generation?.progress != null ? { width: `${Math.round(job.generation.progress * 100)}%` } : {}}
          />
        </div>
      )}
    </>
  );
}
