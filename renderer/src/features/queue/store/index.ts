import { create } from 'zustand';
import type { Job, QueueStats } from '../../../../../shared/ipc/index.ts';
import { errorMessage, ipc } from '../../../lib/ipc.ts';
import { toastError } from '../../../stores/toasts/index.ts';
import { initialState, type QueueState } from './initialState.ts';

export interface QueueActions {
  load: () => Promise<void>;
  /** From the job.updated event and from every call that returns a job. */
  upsert: (job: Job) => void;
  remove: (id: string) => void;
  setStats: (stats: QueueStats) => void;
  cancel: (id: string) => Promise<void>;
  retry: (id: string) => Promise<void>;
  /** A job held by a budget starts this once (docs/workflows.md). */
  submitAnyway: (id: string) => Promise<void>;
  /** Moves a queued job to a new place among queued jobs. */
  reorder: (id: string, toIndex: number) => Promise<void>;
  dismiss: (id: string) => Promise<void>;
  /** A scheduled job goes now; one waiting for the service asks it again now. */
  submitNow: (id: string) => Promise<void>;
  pause: () => Promise<void>;
  resume: () => Promise<void>;
  reset: () => void;
}

export type QueueStore = QueueState & QueueActions;

export const useQueue = create<QueueStore>()((set, get) => {
  /** Runs a call for one job, marking it busy, and reports failure as a toast with main's message. */
  async function withJob(id: string, title: string, run: () => Promise<void>): Promise<void> {
    set((s) => ({ busy: [...s.busy, id] }));
    try {
      await run();
    } catch (error) {
      toastError(title, error);
    } finally {
      set((s) => ({ busy: s.busy.filter((b) => b !== id) }));
    }
  }
  function replaceAll(jobs: Job[]): Record<string, Job> {
    return Object.fromEntries(jobs.map((j) => [j.id, j]));
  }
  return {
    ...initialState,
    async load() {
      set({ status: get().status === 'ready' ? 'ready' : 'loading', error: null });
      try {
        const [{ jobs }, stats] = await Promise.all([ipc().jobs.list(undefined), ipc().jobs.stats()]);
        set({ status: 'ready', jobs: replaceAll(jobs), stats, statsAt: Date.now() });
      } catch (error) {
        set({ status: 'error', error: errorMessage(error) });
      }
    },
    upsert(job) {
      set((s) => ({ jobs: { ...s.jobs, [job.id]: job } }));
    },
    remove(id) {
      set((s) => {
        const { [id]: _gone, ...jobs } = s.jobs;
        return { jobs };
      });
    },
    setStats(stats) {
      set({ stats, statsAt: Date.now() });
    },
    cancel(id) {
      return withJob(id, 'Could not cancel the job', async () => get().upsert(await ipc().jobs.cancel({ id })));
    },
    retry(id) {
      return withJob(id, 'Could not retry the job', async () => get().upsert(await ipc().jobs.retry({ id })));
    },
    submitAnyway(id) {
      return withJob(id, 'Could not submit the job', async () => get().upsert(await ipc().jobs.submitAnyway({ id })));
    },
    reorder(id, toIndex) {
      return withJob(id, 'Could not move the job', async () => {
        const { jobs } = await ipc().jobs.reorder({ id, toIndex: Math.max(0, toIndex) });
        set((s) => ({ jobs: { ...s.jobs, ...replaceAll(jobs) } }));
      });
    },
    dismiss(id) {
      return withJob(id, 'Could not remove the job', async () => {
        await ipc().jobs.remove({ id });
        get().remove(id);
      });
    },
    submitNow(id) {
      return withJob(id, 'Could not submit the job', async () =>
        get().upsert(await ipc().jobs.schedule({ id, at: null })),
      );
    },
    async pause() {
      try {
        set({ stats: await ipc().jobs.pause(), statsAt: Date.now() });
      } catch (error) {
        toastError('Could not pause the queue', error);
      }
    },
    async resume() {
      try {
        set({ stats: await ipc().jobs.resume(), statsAt: Date.now() });
      } catch (error) {
        toastError('Could not resume the queue', error);
      }
    },
    reset() {
      set(initialState);
    },
  };
});
