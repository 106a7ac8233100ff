import type { Job } from '../../../../../shared/ipc/index.ts';
import { JobActions } from './JobActions.tsx';
import { JobHold } from './JobHold.tsx';
import { JobProgress } from './JobProgress.tsx';
import { JobSummary } from './JobSummary.tsx';
import { JobThumb } from './JobThumb.tsx';

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
      <JobThumb job={job} index={index} now={now} />
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
