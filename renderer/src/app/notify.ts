import type { Job } from '../../../shared/ipc/index.ts';

/**
 * In Electron, main shows the OS notification itself (it knows when the window is hidden).
 * In browser mode the page asks the browser, when the creator has allowed it.
 */
export function notifyJobFinished(job: Job, mainNotifies: boolean): void {
  if (mainNotifies || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  if (document.visibilityState === 'visible' && document.hasFocus()) return;
  const title = job.state === 'done' ? 'Generation finished' : 'Generation failed';
  const body = job.state === 'done' ? job.request.prompt.slice(0, 120) : (job.error?.message ?? 'The job failed');
  new Notification(title, { body, tag: job.id });
}
