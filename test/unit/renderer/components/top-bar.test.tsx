import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { TopBar } from '../../../../renderer/src/app/topbar/TopBar.tsx';
import { useSpend } from '../../../../renderer/src/app/topbar/useSpend.ts';
import { JobRow } from '../../../../renderer/src/features/queue/components/JobRow.tsx';
import { useProviders } from '../../../../renderer/src/features/providers/store/index.ts';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { resetTakes } from '../../../../renderer/src/features/queue/store/takes.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { useSettings } from '../../../../renderer/src/stores/settings/index.ts';
import { installFakeIpc, job, libraryItem, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;

const local = {
  id: 'local',
  name: 'Local engine',
  kind: 'local' as const,
  baseUrl: 'http://127.0.0.1:1/v1',
  key: { hasKey: true, last4: null, backend: 'keychain' as const },
  budget: { daily: 5, monthly: null },
};

const done = (id: string, itemId: string, prompt: string) =>
  job({
    id,
    state: 'done',
    position: null,
    finishedAt: '2026-01-01T00:02:00.000Z',
    request: { kind: 'video', prompt, model: 'local/waves', routing: 'optimal', public: false },
    result: { itemIds: [itemId], price: 0.25, paths: [] },
  });

beforeEach(() => {
  ipc = installFakeIpc();
  useQueue.getState().reset();
  useShell.getState().reset();
  useSettings.getState().reset();
  useProviders.getState().reset();
  useSpend.setState({ spend: null });
  resetTakes();
  useSettings.setState({ connected: true, profiles: { activeId: 'local', profiles: [local] } });
  ipc.providers.list.mockResolvedValue({
    keysHeldBy: 'app',
    keyStore: 'memory',
    keyStoreAvailable: true,
    providers: [],
  });
});
afterEach(cleanup);

describe('the top bar', () => {
  it('shows today’s spend against the daily cap, amber near it, and opens Settings', async () => {
    ipc.usage.spend.mockResolvedValue({ day: '2026-12-06', today: 4.2, month: 4.2 });
    render(<TopBar />);
    const meter = await screen.findByTestId('spend-meter');
    expect(meter.textContent).toBe('Today $4.20 / $5 cap');
    expect(meter.className).toContain('topbar-spend-near');
    fireEvent.click(meter);
    expect(useShell.getState().screen).toBe('settings');
  });

  it('counts the jobs in progress and opens the queue as a popover with thumbnails that play', async () => {
    ipc.usage.spend.mockResolvedValue({ day: '2026-12-06', today: 0, month: 0 });
    const take = libraryItem(7, {});
    take.item.thumbnailUrl = 'http://127.0.0.1:1/thumbs/m_7.jpg';
    ipc.library.get.mockResolvedValue(take);
    useQueue.setState({
      jobs: {
        job_run: job({ id: 'job_run', state: 'generating', position: null, startedAt: '2026-01-01T00:00:10.000Z' }),
        job_done: done('job_done', 'm_7', 'a red kite'),
      },
    });
    render(<TopBar />);
    const jobs = screen.getByRole('button', { name: 'Jobs: 1 in progress' });
    fireEvent.click(jobs);
    const popover = screen.getByRole('dialog', { name: 'Recent jobs' });
    const play = await within(popover).findByRole('button', { name: 'Play a red kite' });
    expect(ipc.library.get).toHaveBeenCalledWith({ id: 'm_7' });
    expect(popover.querySelector('img')?.getAttribute('src')).toBe('http://127.0.0.1:1/thumbs/m_7.jpg');
    fireEvent.click(play);
    expect(popover.querySelector('video')?.getAttribute('src')).toBe(take.localUrl ?? take.item.url);
    fireEvent.click(within(popover).getByRole('button', { name: 'Open the Queue' }));
    expect(useShell.getState().screen).toBe('queue');
    expect(screen.queryByRole('dialog', { name: 'Recent jobs' })).toBeNull();
  });

  it('a finished queue row shows its take with a real play button, not a status circle', async () => {
    const take = libraryItem(8, {});
    take.item.thumbnailUrl = 'http://127.0.0.1:1/thumbs/m_8.jpg';
    ipc.library.get.mockResolvedValue(take);
    render(
      <ul>
        <JobRow job={done('job_8', 'm_8', 'a blue kite')} index={null} queuedCount={0} now={Date.now()} />
      </ul>,
    );
    const play = await screen.findByRole('button', { name: 'Play a blue kite' });
    expect(play.getAttribute('aria-pressed')).toBe('false');
    fireEvent.click(play);
    expect(screen.getByRole('button', { name: 'Stop a blue kite' }).getAttribute('aria-pressed')).toBe('true');
  });

  it('a take not in the library yet when its job reads Done is read again when the library reports it', async () => {
    const take = libraryItem(9, {});
    ipc.library.get.mockRejectedValueOnce(new Error('No library item m_9')).mockResolvedValue(take);
    let emit: (e: unknown) => void = () => {};
    const events = new Promise<unknown>((resolve) => (emit = resolve));
    ipc.events.subscribe.mockResolvedValue(
      (async function* () {
        yield await events;
        await new Promise(() => {});
      })(),
    );
    render(
      <ul>
        <JobRow job={done('job_9', 'm_9', 'a green kite')} index={null} queuedCount={0} now={Date.now()} />
      </ul>,
    );
    await expect.poll(() => ipc.library.get.mock.calls.length).toBe(1);
    expect(screen.queryByRole('button', { name: 'Play a green kite' })).toBeNull();
    emit({ type: 'library.changed', change: { reason: 'generated', ids: ['m_9'] } });
    expect(await screen.findByRole('button', { name: 'Play a green kite' })).toBeTruthy();
    expect(ipc.library.get).toHaveBeenCalledTimes(2);
  });
});
