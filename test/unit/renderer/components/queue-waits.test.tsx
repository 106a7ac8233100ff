import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { Job, QueueStats } from '../../../../shared/ipc/index.ts';
import { QueueScreen } from '../../../../renderer/src/features/queue/components/QueueScreen.tsx';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { holdText, slotCardText } from '../../../../renderer/src/features/queue/store/selectors.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, job, type FakeIpc } from '../fixtures.ts';
import { renderJobRow } from './job-row-render.tsx';

let ipc: FakeIpc;
const NOW = Date.parse('2026-01-01T00:01:00.000Z');

const stats = (over: Partial<QueueStats> = {}): QueueStats => ({
  paused: false,
  queued: 0,
  running: { video: 0, image: 0 },
  limit: { video: 5, image: 2 },
  nextSlotInMs: 0,
  nextSlotKind: null,
  nextSlotInMsByKind: { video: 0, image: 0 },
  ...over,
});

beforeEach(() => {
  ipc = installFakeIpc();
  useQueue.getState().reset();
  useShell.getState().reset();
});
afterEach(cleanup);

describe('the Rate limit card', () => {
  it('every video slot busy, an image slot free: the video wait, not "Slot free"', () => {
    const busy = stats({
      running: { video: 5, image: 0 },
      nextSlotInMs: 42_000,
      nextSlotKind: 'video',
      nextSlotInMsByKind: { video: 42_000, image: 0 },
    });
    expect(slotCardText(busy)).toBe('Video slot frees in ~42 s');
    expect(slotCardText(busy, 12_000)).toBe('Video slot frees in ~30 s');
    expect(slotCardText(busy, 50_000)).toBe('Video slot frees any moment');
    expect(slotCardText({ ...busy, nextSlotInMs: null })).toBe('All 5 video slots busy');
    expect(slotCardText(stats())).toBe('Slot free');
    expect(slotCardText(stats({ offline: { nextTryInMs: 3000 } }))).toBe('Waiting for the service');
    expect(slotCardText(null)).toBe('Slot free');
  });
});

describe('the queue header after Resume', () => {
  it('counts the jobs that generate even when an older stats answer arrives after their events', async () => {
    ipc.jobs.list.mockResolvedValue({ jobs: [job({ id: 'a' }), job({ id: 'b', position: 1 })] });
    ipc.jobs.stats.mockResolvedValue(stats({ paused: true, queued: 2 }));
    render(<QueueScreen />);
    await screen.findAllByRole('listitem');
    const running = () => within(screen.getByLabelText('Queue status')).getByText('Running').nextSibling!.textContent;
    expect(running()).toMatch(/^0/);
    // The order seen in 2 of 5 runs: the jobs' events, then resume's reply computed before they started.
    let reply!: (s: QueueStats) => void;
    ipc.jobs.resume.mockReturnValue(new Promise<QueueStats>((r) => (reply = r)));
    const resumed = useQueue.getState().resume();
    act(() => {
      useQueue.getState().upsert(job({ id: 'a', state: 'generating', position: null }));
      useQueue.getState().upsert(job({ id: 'b', state: 'generating', position: null }));
      useQueue.getState().setStats(stats({ running: { video: 2, image: 0 } }));
    });
    await act(async () => {
      reply(stats({ queued: 2 }));
      await resumed;
    });
    expect(running()).toMatch(/^2/);
  });
});

describe('why a queued job waits', () => {
  const row = (j: Job) => renderJobRow(j, { index: 0, queuedCount: 1, now: NOW });

  it('scheduled: "Scheduled for <time>" and "Submit now"', () => {
    const scheduled = job({ hold: { reason: 'scheduled', message: 'Scheduled', until: '2026-01-01T18:30:00.000Z' } });
    ipc.jobs.schedule.mockResolvedValue({ ...scheduled, hold: null });
    const li = row(scheduled);
    expect(within(li).getByTestId('job-state').textContent).toBe('Scheduled');
    expect(within(li).getByLabelText('Why it waits').textContent).toMatch(/^Scheduled for .*(6|18):30/);
    fireEvent.click(within(li).getByRole('button', { name: 'Submit now' }));
    expect(ipc.jobs.schedule).toHaveBeenCalledWith({ id: 'job_1', at: null });
  });

  it('offline: "Waiting for the service" with the next try, and "Try now"', () => {
    const li = row(
      job({ hold: { reason: 'offline', message: 'Waiting for the service', until: '2026-01-01T00:01:08.000Z' } }),
    );
    expect(within(li).getByTestId('job-state').textContent).toBe('Waiting for the service');
    expect(within(li).getByLabelText('Why it waits').textContent).toBe('Waiting for the service · next try in 8 s');
    expect(within(li).getByRole('button', { name: 'Try now' })).toBeTruthy();
  });

  it('slot: the wait of its own kind, read from the stats', () => {
    const j = job({ hold: { reason: 'slot', message: 'Waiting for a video slot', until: null } });
    const s = stats({ nextSlotInMs: 0, nextSlotKind: 'image', nextSlotInMsByKind: { video: 42_000, image: 0 } });
    expect(holdText(j, s, NOW, String)).toBe('Waiting for a video slot · ~42 s');
    expect(holdText({ ...j, state: 'generating' }, s, NOW, String)).toBeNull();
  });
});
