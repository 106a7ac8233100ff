import { beforeEach, describe, expect, it } from 'vitest';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import {
  elapsedSeconds,
  finishedJobs,
  pendingCount,
  progressFraction,
  queuedJobs,
  runningJobs,
  slotFreesInSeconds,
  stateLabel,
} from '../../../../renderer/src/features/queue/store/selectors.ts';
import { useToasts } from '../../../../renderer/src/stores/toasts/index.ts';
import { IpcError } from '../../../../renderer/src/lib/ipc.ts';
import { installFakeIpc, job, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
const stats = {
  paused: false,
  queued: 2,
  running: { video: 1, image: 0 },
  limit: { video: 1, image: 2 },
  nextSlotInMs: 0,
};

beforeEach(() => {
  ipc = installFakeIpc();
  useQueue.getState().reset();
  useToasts.getState().reset();
});

describe('queue selectors', () => {
  const jobs = Object.fromEntries(
    [
      job({ id: 'q2', position: 1 }),
      job({ id: 'q1', position: 0 }),
      job({ id: 'r', state: 'generating', position: null, startedAt: '2026-01-01T00:00:10.000Z' }),
      job({ id: 'd', state: 'done', position: null, finishedAt: '2026-01-01T00:01:00.000Z' }),
      job({
        id: 'f',
        state: 'failed',
        position: null,
        finishedAt: '2026-01-01T00:02:00.000Z',
        error: { code: 'provider_unavailable', message: 'All providers failed' },
      }),
    ].map((j) => [j.id, j]),
  );
  it('orders queued by position, finished newest first', () => {
    expect(queuedJobs({ jobs }).map((j) => j.id)).toEqual(['q1', 'q2']);
    expect(runningJobs({ jobs }).map((j) => j.id)).toEqual(['r']);
    expect(finishedJobs({ jobs }).map((j) => j.id)).toEqual(['f', 'd']);
    expect(pendingCount({ jobs })).toBe(3);
  });
  it('elapsed time and progress', () => {
    expect(elapsedSeconds(jobs['r']!, Date.parse('2026-01-01T00:00:40.000Z'))).toBe(30);
    expect(elapsedSeconds(jobs['d']!, Date.now())).toBe(60);
    expect(progressFraction({ done: 50, total: 200 })).toBe(0.25);
    expect(progressFraction({ done: 50, total: null })).toBeNull();
  });
  it('"Slot frees in Ns" from the rate limits', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    expect(slotFreesInSeconds({ stats: { ...stats, nextSlotInMs: 0 } }, null, now)).toBeNull();
    expect(slotFreesInSeconds({ stats: { ...stats, nextSlotInMs: 4200 } }, null, now)).toBe(5);
    expect(slotFreesInSeconds({ stats: null }, '2026-01-01T00:00:09.000Z', now)).toBe(9);
    expect(stateLabel(job({ waitingUntil: '2026-01-01T00:00:09.000Z' }), now)).toBe('Waiting for rate limit');
  });
});

describe('queue store', () => {
  it('loads jobs and stats', async () => {
    ipc.jobs.list.mockResolvedValue({ jobs: [job({ id: 'a' })] });
    ipc.jobs.stats.mockResolvedValue(stats);
    await useQueue.getState().load();
    expect(useQueue.getState().status).toBe('ready');
    expect(Object.keys(useQueue.getState().jobs)).toEqual(['a']);
    expect(useQueue.getState().stats).toEqual(stats);
  });
  it('applies job updates and removals', () => {
    useQueue.getState().upsert(job({ id: 'a' }));
    useQueue.getState().upsert(job({ id: 'a', state: 'generating' }));
    expect(useQueue.getState().jobs['a']?.state).toBe('generating');
    useQueue.getState().remove('a');
    expect(useQueue.getState().jobs).toEqual({});
  });
  it('cancel, retry and reorder go through the contract', async () => {
    ipc.jobs.cancel.mockResolvedValue(job({ id: 'a', state: 'canceled' }));
    await useQueue.getState().cancel('a');
    expect(useQueue.getState().jobs['a']?.state).toBe('canceled');
    ipc.jobs.retry.mockResolvedValue(job({ id: 'a', state: 'queued' }));
    await useQueue.getState().retry('a');
    expect(ipc.jobs.retry).toHaveBeenCalledWith({ id: 'a' });
    ipc.jobs.reorder.mockResolvedValue({ jobs: [job({ id: 'a', position: 1 }), job({ id: 'b', position: 0 })] });
    await useQueue.getState().reorder('a', 1);
    expect(ipc.jobs.reorder).toHaveBeenCalledWith({ id: 'a', toIndex: 1 });
    expect(queuedJobs(useQueue.getState()).map((j) => j.id)).toEqual(['b', 'a']);
    expect(useQueue.getState().busy).toEqual([]);
  });
  it('pause and resume update the stats', async () => {
    ipc.jobs.pause.mockResolvedValue({ ...stats, paused: true });
    await useQueue.getState().pause();
    expect(useQueue.getState().stats?.paused).toBe(true);
    ipc.jobs.resume.mockResolvedValue(stats);
    await useQueue.getState().resume();
    expect(useQueue.getState().stats?.paused).toBe(false);
  });
  it('a refused action shows main’s message as an error toast', async () => {
    ipc.jobs.retry.mockRejectedValue(
      new IpcError({ code: 'conflict', message: 'Only failed or canceled jobs can be retried' }),
    );
    await useQueue.getState().retry('a');
    expect(useToasts.getState().toasts[0]).toMatchObject({
      tone: 'error',
      title: 'Could not retry the job',
      message: 'Only failed or canceled jobs can be retried',
    });
  });
});
