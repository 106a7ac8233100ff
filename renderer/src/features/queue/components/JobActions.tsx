import type { Job } from '../../../../../shared/ipc/index.ts';
import { useShell } from '../../../lib/shell/index.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { restoreRequest } from '../../../stores/compose/restore.ts';
import { openInLibrary } from '../../../stores/library/index.ts';
import { useModels } from '../../../stores/models/index.ts';
import { useQueue } from '../store/index.ts';
import { isFinished } from '../store/selectors.ts';

/**
 * Back to Compose with the job's request exactly (model, version, provider or routing, parameters),
 * to change it before trying again; what is no longer offered is named there, never swapped for
 * another model. The models are loaded first when Compose has not loaded them yet.
 */
async function editAndRetry(job: Job): Promise<void> {
  if (useModels.getState().status !== 'ready') await useModels.getState().load();
  const { models, catalog, error } = useModels.getState();
  useCompose.getState().restoreDraft(restoreRequest(job.request, models, catalog, error));
  useShell.getState().go('compose');
}

/**
 * What can be done with a job in its state: a waiting job moves in the queue, an unfinished one
 * cancels, a failed or canceled one retries, a finished one leaves the list.
 */
export function JobActions({ job, index, queuedCount }: { job: Job; index: number | null; queuedCount: number }) {
  const busy = useQueue((s) => s.busy.includes(job.id));
  const { cancel, retry, reorder, dismiss, submitNow } = useQueue.getState();
  const finished = isFinished(job);
  return (
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
      {job.state === 'queued' && (job.hold?.reason === 'scheduled' || job.hold?.reason === 'offline') && (
        <button type="button" className="btn btn-small" disabled={busy} onClick={() => void submitNow(job.id)}>
          {job.hold.reason === 'scheduled' ? 'Submit now' : 'Try now'}
        </button>
      )}
      {!finished && (
        <button type="button" className="btn btn-small btn-danger" disabled={busy} onClick={() => void cancel(job.id)}>
          Cancel
        </button>
      )}
      {(job.state === 'failed' || job.state === 'canceled') && (
        <>
          <button type="button" className="btn btn-small" disabled={busy} onClick={() => void retry(job.id)}>
            Retry
          </button>
          <button type="button" className="btn btn-small btn-ghost" onClick={() => void editAndRetry(job)}>
            Edit
          </button>
        </>
      )}
      {job.state === 'done' && (
        <button
          type="button"
          className="btn btn-small"
          onClick={() => {
            const first = job.result?.itemIds[0];
            if (first) void openInLibrary(first);
            else useShell.getState().go('library');
          }}
        >
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
  );
}
