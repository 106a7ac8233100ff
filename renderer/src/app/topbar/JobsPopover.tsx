import { useCallback, useId, useRef, useState } from 'react';
import { useShell } from '../../lib/shell/index.ts';
import { useNow } from '../../lib/useNow.ts';
import { useDismiss } from '../../lib/useDismiss.ts';
import { formatPrice } from '../../lib/format.ts';
import { JobThumb } from '../../features/queue/components/JobThumb.tsx';
import { useQueue } from '../../features/queue/store/index.ts';
import { pendingCount, recentJobs, stateLabel } from '../../features/queue/store/selectors.ts';

/** How many jobs the popover lists: the rest are one click away in the Queue. */
const SHOWN = 8;

/**
 * The jobs counter in the top bar and the queue as a popover under it: the latest jobs with their
 * thumbnails (a finished take plays in place), and the way to the Queue screen for its controls.
 */
export function JobsButton() {
  const pending = useQueue((s) => pendingCount(s));
  const jobs = useQueue((s) => s.jobs);
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const root = useRef<HTMLDivElement>(null);
  const close = useCallback(() => setOpen(false), []);
  useDismiss(open, root, close);
  const now = useNow(1000, open && pending > 0);
  const list = open ? recentJobs({ jobs }).slice(0, SHOWN) : [];
  return (
    <div className="topbar-jobs" ref={root}>
      <button
        type="button"
        className="topbar-jobs-btn"
        aria-expanded={open}
        aria-controls={panelId}
        aria-label={pending > 0 ? `Jobs: ${pending} in progress` : 'Jobs: none in progress'}
        onClick={() => setOpen(!open)}
      >
        Jobs
        <span className={`topbar-count${pending > 0 ? ' topbar-count-live' : ''}`}>{pending}</span>
      </button>
      {open && (
        <div className="jobs-popover" id={panelId} role="dialog" aria-label="Recent jobs">
          {list.length === 0 ? (
            <p className="faint">No jobs yet. Generate one in Compose.</p>
          ) : (
            <ul className="jobs-popover-list">
              {list.map((job) => (
                <li key={job.id} className="jobs-popover-row">
                  <JobThumb job={job} index={null} now={now} />
                  <span className="grow jobs-popover-text">
                    <span className="job-prompt" title={job.request.prompt}>
                      {job.request.prompt}
                    </span>
                    <span className="faint">
                      {stateLabel(job, now)}
                      {job.result?.price != null ? ` · ${formatPrice(job.result.price)}` : ''}
                    </span>
                  </span>
                </li>
              ))}
            </ul>
          )}
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              setOpen(false);
              useShell.getState().go('queue');
            }}
          >
            Open the Queue
          </button>
        </div>
      )}
    </div>
  );
}
