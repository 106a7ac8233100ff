import type { Job } from '../../../../../shared/ipc/index.ts';
import { useQueue } from '../store/index.ts';
import { formatDate } from '../../../lib/format.ts';
import { holdText, isFinished, progressFraction, slotFreesInSeconds } from '../store/selectors.ts';

type RetryWait = NonNullable<Job['upload']>['wait'];

/** Whole seconds left of a wait, at least 1. */
const secondsLeft = (until: string, now: number): number => Math.max(1, Math.ceil((Date.parse(until) - now) / 1000));

/** A wait still ahead, said as what it waits for and how long; nothing once it has passed. */
function WaitNotice({ wait, now }: { wait: RetryWait; now: number }) {
  if (!wait || Date.parse(wait.until) <= now) return null;
  const retry = wait.reason === 'retry';
  return (
    <div
      className="notice notice-info"
      style={{ padding: '4px 8px' }}
      role="status"
      aria-label={retry ? 'Retrying' : 'Rate limited'}
    >
      {retry ? 'Retrying' : 'Rate limited'}: waiting {secondsLeft(wait.until, now)}s before {wait.what}
      {retry && wait.message ? ` (${wait.message})` : ''}
    </div>
  );
}

function Bar({
  label,
  progress,
  now,
}: {
  label: string;
  progress: { done: number; total: number | null; wait?: RetryWait };
  now: number;
}) {
  const fraction = progressFraction(progress);
  return (
    <>
      <WaitNotice wait={progress.wait} now={now} />
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
          {job.upload && <Bar label="Upload" progress={job.upload} now={now} />}
          {job.download && <Bar label="Download" progress={job.download} now={now} />}
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
      {job.state === 'generating' && <WaitNotice wait={job.generation?.wait} now={now} />}
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
