// docs/workflows.md, "Notices": a click on a finished job's desktop notification reaches the page as
// main's `stage.show` event, which puts the take on the stage of Compose, from any screen.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, renderHook } from '@testing-library/react';
import type { AppEvent } from '../../../shared/ipc/index.ts';
import { useAppEvents } from '../../../renderer/src/app/useAppEvents.ts';
import { useShell } from '../../../renderer/src/lib/shell/index.ts';
import { useStage } from '../../../renderer/src/stores/stage/index.ts';
import { installFakeIpc, libraryItem } from './fixtures.ts';

afterEach(cleanup);

/** An event stream that sends `events`, then stays open. */
async function* streamOf(events: AppEvent[]): AsyncGenerator<AppEvent> {
  for (const event of events) yield event;
  await new Promise(() => {});
}

describe('the stage.show event', () => {
  it('puts the named take on the stage and opens Compose', async () => {
    const ipc = installFakeIpc();
    useStage.getState().reset();
    useShell.getState().reset();
    useShell.getState().go('library');
    ipc.library.get.mockResolvedValue(libraryItem(4));
    ipc.events.subscribe.mockResolvedValue(streamOf([{ type: 'stage.show', take: { jobId: 'job_9', itemId: 'm_4' } }]));
    renderHook(() => useAppEvents(true));
    await vi.waitFor(() => expect(useStage.getState().focus).toEqual({ kind: 'item', id: 'm_4' }));
    expect(ipc.library.get).toHaveBeenCalledWith({ id: 'm_4' });
    expect(useShell.getState().screen).toBe('compose');
  });
});
