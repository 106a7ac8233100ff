import { AppEvent } from '../../shared/ipc/schemas/events.ts';
import type { Job } from '../../shared/ipc/schemas/jobs.ts';
import type { EventBus } from './events.ts';
import type { PlatformPort } from './platform.ts';

/**
 * A finished or failed job's desktop notification (docs/workflows.md, "Notices"), only while the window
 * is not focused: in front of the creator, the page's own notice says it. A click on a finished job's
 * focuses the window and asks the page, on the event stream, to put the take on the stage.
 */
function notifyJobEnd(bus: EventBus, platform: PlatformPort, job: Job): void {
  if (platform.windowFocused()) return;
  const prompt = job.request.prompt.length > 80 ? `${job.request.prompt.slice(0, 77)}…` : job.request.prompt;
  if (job.state !== 'done') {
    const body = job.error?.message ?? prompt;
    const title = `Your ${job.request.kind} failed`;
    platform.notify({ level: 'error', title, body, jobId: job.id, itemId: null }, () => platform.focusWindow());
    return;
  }
  const itemId = job.result?.itemIds[0] ?? null;
  const title = `Your ${job.request.kind} is ready`;
  platform.notify({ level: 'success', title, body: prompt, jobId: job.id, itemId }, () => {
    platform.focusWindow();
    // Checked against the contract's own schema here, as the page will check it.
    bus.publish(AppEvent.parse({ type: 'stage.show', take: { jobId: job.id, itemId } }));
  });
}

/**
 * OS feedback from the event stream: a notification when a job finishes or fails (and for any
 * `notification` event), and the queue's progress in the taskbar/dock.
 */
export function wireFeedback(bus: EventBus, platform: PlatformPort, enabled: () => boolean): () => void {
  const finished = new Set<string>();
  const active = new Map<string, number>();
  const showProgress = (): void => {
    if (active.size === 0) return platform.setProgress(null);
    let sum = 0;
    for (const v of active.values()) sum += v;
    platform.setProgress(Math.min(1, Math.max(0, sum / active.size)));
  };
  const onEvent = (event: AppEvent): void => {
    if (event.type === 'notification') {
      if (enabled()) platform.notify(event.notification);
      return;
    }
    if (event.type !== 'job.updated') return;
    const { job } = event;
    if (job.state === 'done' || job.state === 'failed') {
      if (active.delete(job.id)) showProgress();
      if (finished.has(job.id)) return;
      finished.add(job.id);
      if (enabled()) notifyJobEnd(bus, platform, job);
      return;
    }
    if (job.state === 'canceled') {
      active.delete(job.id);
      finished.add(job.id);
    } else {
      finished.delete(job.id);
      const t = job.download ?? job.upload;
      const fraction =
        job.state === 'downloading' && t?.total
          ? 0.9 + 0.1 * (t.done / t.total)
          : job.state === 'generating'
            ? 0.5
            : 0.1;
      active.set(job.id, job.state === 'queued' ? 0 : fraction);
    }
    showProgress();
  };
  return bus.on(onEvent);
}
