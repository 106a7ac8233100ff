import type { Job, ShowTakeEvent } from '../../../../shared/ipc/index.ts';
import { ipc } from '../../lib/ipc.ts';
import { useShell } from '../../lib/shell/index.ts';
import { toastError } from '../toasts/index.ts';
import { useToasts } from '../toasts/index.ts';
import { useStage } from './index.ts';

/** Jobs whose hold was said once already (docs/workflows.md, "The canvas": a held job says why once). */
const saidHold = new Set<string>();

/** Puts a finished job's first take on the stage, from wherever the creator is. */
export function showJobOnStage(job: Job): Promise<void> {
  return showTakeOnStage({ jobId: job.id, itemId: job.result?.itemIds[0] ?? null });
}

/**
 * The same from ids: a desktop notification's click (main's `stage.show` event) names the job and its
 * first take; when the take is not named, the queue's copy of the job says it.
 */
export async function showTakeOnStage(take: ShowTakeEvent): Promise<void> {
  const id = take.itemId ?? useStage.getState().submitted[take.jobId]?.result?.itemIds[0];
  if (!id) return;
  try {
    const entry = await ipc().library.get({ id });
    const stage = useStage.getState();
    if (!stage.entries.some((e) => e.kind === 'job' && e.id === take.jobId)) stage.showItem(entry);
    else {
      stage.remember([entry]);
      stage.focusTake({ kind: 'item', id });
    }
    useShell.getState().go('compose');
  } catch (error) {
    toastError('Could not show the take', error);
  }
}

/**
 * What a job's change tells the creator wherever they are: a finished take with "Show on stage",
 * and the reason a job is held, once per job (a budget, the service offline, all slots busy).
 */
export function noticeJobChange(before: Job | undefined, job: Job): void {
  useStage.getState().updateJob(job);
  const finished = job.state === 'done' && before !== undefined && before.state !== 'done';
  if (finished && (job.result?.itemIds.length ?? 0) > 0) {
    const n = job.result!.itemIds.length;
    useToasts.getState().push({
      tone: 'success',
      title: n === 1 ? 'Take ready' : `${n} takes ready`,
      message: job.request.prompt.slice(0, 80),
      action: { label: 'Show on stage', run: () => void showJobOnStage(job) },
    });
  }
  const hold = job.hold;
  if (
    job.state === 'queued' &&
    hold &&
    hold.reason !== 'scheduled' &&
    hold.reason !== 'slot' &&
    !saidHold.has(job.id)
  ) {
    saidHold.add(job.id);
    useToasts.getState().push({ tone: 'info', title: 'Job held', message: hold.message });
  }
}
