import type { Job } from '../../../shared/ipc/index.ts';
import { showJobOnStage } from '../stores/stage/notices.ts';

/**
 * In Electron, main shows the OS notification itself (it knows when the window is hidden).
 * In browser mode the page asks the browser, only when the creator has allowed it already (it never prompts).
 */
export function notifyJobFinished(job: Job, mainNotifies: boolean): void {
  if (mainNotifies || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  if (document.visibilityState === 'visible' && document.hasFocus()) return;
  const title = job.state === 'done' ? 'Generation finished' : 'Generation failed';
  const body = job.state === 'done' ? job.request.prompt.slice(0, 120) : (job.error?.message ?? 'The job failed');
  const note = new Notification(title, { body, tag: job.id });
  // As in Electron (docs/workflows.md, "Notices"): a click brings the page forward, a finished take onto the stage.
  note.onclick = () => {
    window.focus();
    if (job.state === 'done') void showJobOnStage(job);
  };
}
