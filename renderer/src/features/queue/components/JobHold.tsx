import type { Job } from '../../../../../shared/ipc/index.ts';
import { useShell } from '../../../lib/shell/index.ts';
import { useQueue } from '../store/index.ts';

/**
 * Why a queued job waits (docs/workflows.md). Over a budget, the creator can raise the cap in Settings
 * (the job then starts) or submit this job once anyway.
 */
export function JobHold({ job }: { job: Job }) {
  const busy = useQueue((s) => s.busy.includes(job.id));
  const hold = job.hold;
  if (job.state !== 'queued' || !hold) return null;
  return (
    <div className="notice notice-warning job-hold" role="status" aria-label="Held">
      <span className="grow">{hold.message}</span>
      {hold.reason === 'budget' && (
        <>
          <button type="button" className="btn btn-small btn-ghost" onClick={() => useShell.getState().go('settings')}>
            Raise the cap
          </button>
          <button
            type="button"
            className="btn btn-small"
            disabled={busy}
            onClick={() => void useQueue.getState().submitAnyway(job.id)}
          >
            Submit once anyway
          </button>
        </>
      )}
    </div>
  );
}
