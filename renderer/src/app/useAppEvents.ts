import { useEffect } from 'react';
import { onEvent, onReconnect } from '../lib/ipc.ts';
import { useChains } from '../stores/chains/index.ts';
import { useLibrary } from '../stores/library/index.ts';
import { useModels } from '../stores/models/index.ts';
import { useProviders } from '../features/providers/store/index.ts';
import { useQueue } from '../features/queue/store/index.ts';
import { useSettings } from '../stores/settings/index.ts';
import { useToasts } from '../stores/toasts/index.ts';
import { notifyJobFinished } from './notify.ts';
import { noticeJobChange, showTakeOnStage } from '../stores/stage/notices.ts';
import { useShell } from '../lib/shell/index.ts';

/** Wires main's event stream into the stores, once, for the life of the window. */
export function useAppEvents(enabled: boolean): void {
  useEffect(() => {
    if (!enabled) return undefined;
    const off = [
      // Events missed while the stream was down: read the state they would have told.
      onReconnect(() => {
        void useQueue.getState().load();
        useChains.getState().invalidate();
        const lib = useLibrary.getState();
        if (lib.status !== 'idle') void lib.reload({ keepLoaded: true });
      }),
      onEvent('job.updated', ({ job }) => {
        const before = useQueue.getState().jobs[job.id];
        // The moment a job's completion reached the window: the renderer benchmark times the take's
        // first frame on the stage from here (docs/benchmarks.md). A mark costs nothing to leave in.
        if (job.state === 'done' && before?.state !== 'done') performance.mark(`clipdesk:job-done:${job.id}`);
        useQueue.getState().upsert(job);
        noticeJobChange(before, job);
        if (before && before.state !== job.state && (job.state === 'done' || job.state === 'failed')) {
          notifyJobFinished(job, useSettings.getState().app?.capabilities.osNotifications === true);
          if (job.state === 'failed' && job.error) {
            const auth = isKeyError(job.error);
            useToasts.getState().push({
              tone: 'error',
              title: auth ? 'The API key was refused' : 'Generation failed',
              message: job.error.message,
              ...(auth ? { action: { label: 'Fix API key', run: () => useShell.getState().go('settings') } } : {}),
            });
          }
        }
      }),
      onEvent('job.removed', ({ id }) => useQueue.getState().remove(id)),
      onEvent('queue.stats', ({ stats }) => useQueue.getState().setStats(stats)),
      onEvent('transfer.progress', ({ transfer }) => {
        if (!transfer.jobId) return;
        const job = useQueue.getState().jobs[transfer.jobId];
        if (!job) return;
        const progress = { done: transfer.done, total: transfer.total };
        useQueue
          .getState()
          .upsert(transfer.direction === 'upload' ? { ...job, upload: progress } : { ...job, download: progress });
      }),
      onEvent('library.changed', ({ change }) => {
        if (change.reason === 'chain' || change.reason === 'generated' || change.reason === 'sync')
          useChains.getState().invalidate();
        const lib = useLibrary.getState();
        if (lib.status === 'idle') return;
        if (change.ids.length === 0 || change.reason === 'generated' || change.reason === 'sync')
          void lib.reload({ keepLoaded: true });
        else void lib.refreshItems(change.ids);
      }),
      onEvent('profiles.changed', () => {
        void useSettings.getState().loadProfiles();
        // Another profile is another service: its providers, and who holds their keys.
        if (useProviders.getState().status !== 'idle') void useProviders.getState().load();
      }),
      // A key, switch or base URL changed: the panel, and which models the picker offers.
      onEvent('providers.changed', () => {
        if (useProviders.getState().status !== 'idle') void useProviders.getState().load();
        if (useModels.getState().status !== 'idle') void useModels.getState().refresh();
      }),
      onEvent('settings.changed', () => void useSettings.getState().load()),
      // The creator clicked a finished job's desktop notification: main focused the window.
      onEvent('stage.show', ({ take }) => void showTakeOnStage(take)),
      onEvent('notification', ({ notification }) => {
        if (notification.jobId) return; // job outcomes are reported from job.updated
        useToasts.getState().push({
          tone:
            notification.level === 'error' || notification.level === 'warning'
              ? 'error'
              : notification.level === 'success'
                ? 'success'
                : 'info',
          title: notification.title,
          message: notification.body,
        });
      }),
    ];
    return () => off.forEach((f) => f());
  }, [enabled]);
}

/** A refused key, whatever layer reported it: the service's codes, or its exact messages. */
export function isKeyError(error: { code: string; message: string }): boolean {
  return (
    /authentication|permission|unauthori[sz]ed/i.test(error.code) ||
    /API key (is missing|does not have permission)|Invalid API key/i.test(error.message)
  );
}
