// In the renderer (docs/workflows.md, asynchronous mode): the queue shows the service's real step and the provider's queue
// position; Library → "Make variations ×N" prefills Compose and submits one variations job; the
// detail panel shows "Variation of …" with a link back to the source.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { DetailPanel } from '../../../../renderer/src/features/library/components/DetailPanel.tsx';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { detailItem } from '../../../../renderer/src/stores/library/selectors.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, job, libraryItem, model, type FakeIpc } from '../fixtures.ts';
import { renderJobRow } from './job-row-render.tsx';

let ipc: FakeIpc;
const NOW = Date.parse('2026-01-01T00:01:00.000Z');

beforeEach(() => {
  ipc = installFakeIpc();
  useQueue.getState().reset();
  useCompose.getState().reset();
  useLibrary.getState().reset();
  useModels.getState().reset();
  useShell.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [model()] });
  ipc.providers.list.mockResolvedValue({ providers: [] });
});
afterEach(cleanup);

const row = (j: ReturnType<typeof job>) => renderJobRow(j, { now: NOW });

describe('the queue in asynchronous mode', () => {
  it('shows the provider’s queue position while the generation waits there', () => {
    const li = row(
      job({
        state: 'generating',
        position: null,
        generation: { id: 'gen_1', step: 'queued', queuePosition: 4, progress: null },
      }),
    );
    expect(within(li).getByRole('status', { name: 'Step' }).textContent).toBe(
      'Queued at the provider · queue position 4',
    );
  });

  it('shows the real step (Transcoding) and the provider’s progress', () => {
    const li = row(
      job({
        state: 'generating',
        position: null,
        generation: { id: 'gen_1', step: 'transcoding', queuePosition: null, progress: 0.5 },
      }),
    );
    expect(within(li).getByRole('status', { name: 'Step' }).textContent).toBe('Transcoding · 50%');
    expect(within(li).getByRole('progressbar', { name: 'Generating' }).getAttribute('aria-valuenow')).toBe('50');
  });

  it('a 429 while following the generation says what it waits for and how long', () => {
    const li = row(
      job({
        state: 'generating',
        position: null,
        generation: {
          id: 'gen_1',
          step: 'generating',
          queuePosition: null,
          progress: null,
          wait: { what: 'GET /generations/gen_1', until: new Date(NOW + 4_000).toISOString() },
        },
      }),
    );
    expect(within(li).getByRole('status', { name: 'Rate limited' }).textContent).toBe(
      'Rate limited: waiting 4s before GET /generations/gen_1',
    );
  });

  it('a service without async mode: no step, the bar is indeterminate as before', () => {
    const li = row(job({ state: 'generating', position: null }));
    expect(within(li).queryByRole('status', { name: 'Step' })).toBeNull();
    expect(within(li).getByRole('progressbar', { name: 'Generating' }).className).toContain('indeterminate');
  });
});

describe('Make variations ×N', () => {
  it('opens Compose prefilled with the video and submits one /videos/variations job of N', async () => {
    await useModels.getState().load();
    const source = libraryItem(7, { item: { ...libraryItem(7).item, model: model().id } });
    render(<DetailPanel entry={source} now={NOW} feed={false} />);
    const actions = screen.getByRole('group', { name: 'Actions' });
    fireEvent.change(within(actions).getByLabelText('How many variations'), { target: { value: '2' } });
    fireEvent.click(within(actions).getByRole('button', { name: 'Make variations ×2' }));
    expect(useShell.getState().screen).toBe('compose');
    expect(useCompose.getState()).toMatchObject({
      prompt: 'prompt number 7',
      modelId: model().id,
      variationOf: { mediaId: 'm_7', count: 2 },
    });
    cleanup();

    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    renderOpenCompose();
    const banner = screen.getByRole('status', { name: 'Variations' });
    expect(banner.textContent).toContain('Making variations of “prompt number 7”');
    fireEvent.change(within(banner).getByLabelText('Videos'), { target: { value: '3' } });
    fireEvent.click(screen.getByRole('button', { name: /^Make variations ×3/ }));
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).toMatchObject({
      kind: 'video',
      prompt: 'prompt number 7',
      variationOf: 'm_7',
      variations: 3,
    });
    // One job of three videos, through the one submit route.
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].count).toBe(1);
    expect(ipc.jobs.submit).not.toHaveBeenCalled();
    // The next Generate is an ordinary one again.
    expect(useCompose.getState().variationOf).toBeNull();
  });

  it('is offered for own videos only, not for images nor in the public feed', () => {
    render(<DetailPanel entry={libraryItem(3)} now={NOW} feed />);
    expect(screen.queryByRole('button', { name: /Make variations/ })).toBeNull();
    cleanup();
    const image = libraryItem(4, { item: { ...libraryItem(4).item, media: 'image', mime: 'image/png' } });
    render(<DetailPanel entry={image} now={NOW} feed={false} />);
    expect(screen.queryByRole('button', { name: /Make variations/ })).toBeNull();
  });
});

describe('Variation of …', () => {
  it('names the source and opens it, fetching it when it is not on a loaded page', async () => {
    const variant = libraryItem(9, { item: { ...libraryItem(9).item, variationOf: 'm_2' } });
    ipc.library.get.mockResolvedValue(libraryItem(2));
    render(<DetailPanel entry={variant} now={NOW} feed={false} />);
    const meta = screen.getByText('Variation of').parentElement!;
    fireEvent.click(within(meta).getByRole('button', { name: 'm_2' }));
    await waitFor(() => expect(useLibrary.getState().detailId).toBe('m_2'));
    expect(ipc.library.get).toHaveBeenCalledWith({ id: 'm_2' });
    expect(detailItem(useLibrary.getState())?.item.prompt).toBe('prompt number 2');
  });

  it('shows the source’s prompt when it is loaded, and nothing for an item that is not a variation', () => {
    useLibrary.setState({ items: [libraryItem(2)] });
    const variant = libraryItem(9, { item: { ...libraryItem(9).item, variationOf: 'm_2' } });
    render(<DetailPanel entry={variant} now={NOW} feed={false} />);
    const link = within(screen.getByText('Variation of').parentElement!).getByRole('button', {
      name: '“prompt number 2”',
    });
    fireEvent.click(link);
    expect(useLibrary.getState().detailId).toBe('m_2');
    expect(ipc.library.get).not.toHaveBeenCalled();
    cleanup();
    render(<DetailPanel entry={libraryItem(5)} now={NOW} feed={false} />);
    expect(screen.queryByText('Variation of')).toBeNull();
  });
});
