import type { Job } from '../../../../../shared/ipc/index.ts';
import { stateLabel } from '../store/selectors.ts';
import { JobActions } from './JobActions.tsx';
import { JobHold } from './JobHold.tsx';
import { JobProgress } from './JobProgress.tsx';
import { JobSummary } from './JobSummary.tsx';

const FINISHED_MARK: Partial<Record<Job['state'], string>> = { done: '✓', failed: '!', canceled: '–' };

/** One job in the queue: its place (or outcome), what it is, how far it got, and its actions. */
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
  return (
    <li className="job" aria-label={`Job: ${job.request.prompt}`}>
      <div
        className="job-pos"
        aria-label={index !== null ? `Position ${index + 1} in the queue` : stateLabel(job, now)}
      >
        {index !== null ? index + 1 : (FINISHED_MARK[job.state] ?? '▶')}
      </div>
      <div className="job-body">
        <JobSummary job={job} now={now} />
        <JobProgress job={job} now={now} />
        <JobHold job={job} />
        {job.state === 'failed' && job.error && (
          <div className="notice notice-error" role="alert">
            <span className="grow">
              <strong>{job.error.code}</strong>: {job.error.message}
            </span>
          </div>
        )}
      </div>
      <JobActions job={job} index={index} queuedCount={queuedCount} />
    </li>
  );
}
