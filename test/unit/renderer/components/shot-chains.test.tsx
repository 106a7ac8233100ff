// In the renderer (docs/workflows.md, shot chains): "Continue this shot" opens Compose with the last frame, the same model
// and the parent recorded; the detail panel shows the chain as a strip in order, links the parent,
// previews and exports the sequence; trim points export a clip or shape the shot in its chain.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ChainView, LibraryItem } from '../../../../shared/ipc/index.ts';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { DetailPanel } from '../../../../renderer/src/features/library/components/DetailPanel.tsx';
import { LibraryTile } from '../../../../renderer/src/features/library/components/LibraryTile.tsx';
import { useChains } from '../../../../renderer/src/stores/chains/index.ts';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, job, libraryItem, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
const NOW = Date.parse('2026-01-01T00:01:00.000Z');
const file = (path: string) => ({ path, url: `/local-media/work/${path}`, mime: 'video/mp4', bytes: 2048 });

function chainOf(ids: string[], trim: Record<string, { start: number; end: number }> = {}): ChainView {
  return {
    chainId: ids[0]!,
    shots: ids.map((id, i) => ({
      itemId: id,
      position: i + 1,
      parentId: i === 0 ? null : ids[i - 1]!,
      sourceImageSha256: i === 0 ? null : 'a'.repeat(64),
      trim: trim[id] ?? null,
      item: libraryItem(Number(id.slice(2))),
    })),
  };
}

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useLibrary.getState().reset();
  useChains.getState().reset();
  useModels.getState().reset();
  useShell.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [model()] });
  ipc.providers.list.mockResolvedValue({ providers: [] });
  ipc.library.chain.mockResolvedValue({ chainId: null, shots: [] });
});
afterEach(cleanup);

const panel = (entry: LibraryItem) => render(<DetailPanel entry={entry} now={NOW} feed={false} />);

describe('Continue this shot', () => {
  it('opens Compose with the last frame and the same model, and the job records its parent', async () => {
    await useModels.getState().load();
    ipc.library.useLastFrame.mockResolvedValue({ ...file('/data/media/frames/m_7-last.png'), mime: 'image/png' });
    panel(libraryItem(7));
    fireEvent.click(
      within(screen.getByRole('group', { name: 'Actions' })).getByRole('button', { name: 'Continue this shot' }),
    );
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    expect(ipc.library.useLastFrame).toHaveBeenCalledWith({ id: 'm_7' });
    expect(useCompose.getState()).toMatchObject({
      prompt: 'prompt number 7',
      modelId: model().id,
      startFrame: { source: 'library', continues: 'm_7', lastFramePath: '/data/media/frames/m_7-last.png' },
    });
    cleanup();

    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    renderOpenCompose();
    expect(screen.getByText(/Continues “prompt number 7”/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Generate' }));
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).toMatchObject({
      kind: 'video',
      // The same model as the parent (the request names it base/slug).
      model: 'local/waves',
      startFrame: { kind: 'path', path: '/data/media/frames/m_7-last.png' },
      parentItemId: 'm_7',
    });
  });

  it('a start frame that is not a continuation records no parent', async () => {
    await useModels.getState().load();
    ipc.library.useLastFrame.mockResolvedValue({ ...file('/f.png'), mime: 'image/png' });
    panel(libraryItem(7));
    fireEvent.click(screen.getByRole('button', { name: 'Use last frame' }));
    await waitFor(() => expect(useCompose.getState().startFrame).not.toBeNull());
    expect(useCompose.getState().startFrame).not.toHaveProperty('continues');
  });
});

describe('the chain in the detail panel', () => {
  it('shows the shots in order, links the parent, and previews and exports the sequence', async () => {
    ipc.library.chain.mockResolvedValue(chainOf(['m_1', 'm_2', 'm_3']));
    ipc.library.get.mockResolvedValue(libraryItem(1));
    panel(libraryItem(2, { chain: { chainId: 'm_1', position: 2, length: 3 } }));
    const chain = await screen.findByRole('region', { name: 'Shot chain' });
    expect(within(chain).getByText('Shot 2 of 3')).toBeTruthy();
    const shots = within(chain)
      .getAllByRole('listitem')
      .map((li) => within(li).getByRole('button'));
    expect(shots.map((b) => b.getAttribute('aria-label'))).toEqual([
      'Shot 1: prompt number 1',
      'Shot 2: prompt number 2',
      'Shot 3: prompt number 3',
    ]);
    expect(shots[1]!.getAttribute('aria-current')).toBe('true');

    fireEvent.click(within(chain).getByRole('button', { name: 'Continues shot 1' }));
    await waitFor(() => expect(ipc.library.get).toHaveBeenCalledWith({ id: 'm_1' }));

    ipc.media.sequence.mockResolvedValueOnce(file('/data/media/exports/m_1-sequence-3-shots.mp4'));
    fireEvent.click(within(chain).getByRole('button', { name: 'Preview sequence' }));
    await waitFor(() => expect(within(chain).getByLabelText('Sequence preview')).toBeTruthy());
    expect(ipc.media.sequence).toHaveBeenLastCalledWith({ chainId: 'm_1', purpose: 'preview' });

    ipc.media.sequence.mockResolvedValueOnce(file('/home/me/Clipdesk/exports/m_1-sequence-3-shots.mp4'));
    fireEvent.click(within(chain).getByRole('button', { name: 'Export sequence' }));
    const exported = await within(chain).findByRole('status', { name: 'Sequence export' });
    expect(exported.textContent).toContain('/home/me/Clipdesk/exports/m_1-sequence-3-shots.mp4');
    expect(ipc.media.sequence).toHaveBeenLastCalledWith({ chainId: 'm_1', purpose: 'export' });
  });

  it('shows nothing for a clip in no chain, and a badge on tiles of chained clips', async () => {
    panel(libraryItem(5));
    await waitFor(() => expect(ipc.library.chain).toHaveBeenCalledWith({ id: 'm_5' }));
    expect(screen.queryByRole('region', { name: 'Shot chain' })).toBeNull();
    cleanup();
    render(
      <LibraryTile
        entry={libraryItem(3, { chain: { chainId: 'm_1', position: 3, length: 4 } })}
        index={0}
        selected={false}
        open={false}
        focused={false}
        now={NOW}
        onActivate={() => {}}
      />,
    );
    expect(screen.getByText('Shot 3/4')).toBeTruthy();
  });
});

describe('trim', () => {
  it('exports the trimmed clip, uses it in the chain, and refuses an out point before the in point', async () => {
    panel(libraryItem(2));
    const trim = screen.getByRole('region', { name: 'Trim' });
    fireEvent.change(within(trim).getByLabelText('In point (seconds)'), { target: { value: '3' } });
    fireEvent.change(within(trim).getByLabelText('Out point (seconds)'), { target: { value: '1' } });
    expect(within(trim).getByText('The out point must be after the in point.')).toBeTruthy();
    expect(within(trim).getByRole<HTMLButtonElement>('button', { name: 'Export trimmed clip' }).disabled).toBe(true);

    fireEvent.change(within(trim).getByLabelText('In point (seconds)'), { target: { value: '0.5' } });
    fireEvent.change(within(trim).getByLabelText('Out point (seconds)'), { target: { value: '2.5' } });
    ipc.media.trim.mockResolvedValue(file('/home/me/Clipdesk/exports/m_2-trim-0.5-2.5.mp4'));
    fireEvent.click(within(trim).getByRole('button', { name: 'Export trimmed clip' }));
    const result = await within(trim).findByRole('status', { name: 'Trim result' });
    expect(result.textContent).toContain('m_2-trim-0.5-2.5.mp4');
    expect(ipc.media.trim).toHaveBeenCalledWith({ id: 'm_2', start: 0.5, end: 2.5 });

    ipc.library.setShotTrim.mockResolvedValue(chainOf(['m_2'], { m_2: { start: 0.5, end: 2.5 } }));
    fireEvent.click(within(trim).getByRole('button', { name: 'Use trimmed clip in chain' }));
    await waitFor(() => expect(ipc.library.setShotTrim).toHaveBeenCalledWith({ id: 'm_2', start: 0.5, end: 2.5 }));
  });

  it('shows the shot’s trim in its chain and goes back to the whole clip', async () => {
    ipc.library.chain.mockResolvedValue(chainOf(['m_1', 'm_2'], { m_2: { start: 1, end: 3 } }));
    panel(libraryItem(2));
    const status = await screen.findByRole('status', { name: 'Chain trim' });
    expect(status.textContent).toBe('In its chain: 1–3 s');
    const trim = screen.getByRole('region', { name: 'Trim' });
    expect(within(trim).getByLabelText<HTMLInputElement>('In point (seconds)').value).toBe('1');
    expect(screen.getByRole('button', { name: 'Shot 2: prompt number 2 (trimmed 1–3 s)' })).toBeTruthy();
    ipc.library.setShotTrim.mockResolvedValue(chainOf(['m_1', 'm_2']));
    fireEvent.click(within(trim).getByRole('button', { name: 'Use whole clip' }));
    await waitFor(() => expect(ipc.library.setShotTrim).toHaveBeenCalledWith({ id: 'm_2', clear: true }));
  });
});
