// The shot chain as a timeline on the canvas (docs/workflows.md, "The canvas"): shown above the dock
// when the take on the stage is a shot of a chain; a click puts a shot on the stage; Alt+←/→ and the
// move buttons reorder (library.moveShot); trim handles store a trim as the Library does
// (library.setShotTrim); "+ continue" puts the last shot's last frame in the start-frame slot.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ChainView } from '../../../../shared/ipc/index.ts';
import { ComposeScreen } from '../../../../renderer/src/features/compose/components/ComposeScreen.tsx';
import { useChains } from '../../../../renderer/src/stores/chains/index.ts';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useStage } from '../../../../renderer/src/stores/stage/index.ts';
import { useToasts } from '../../../../renderer/src/stores/toasts/index.ts';
import { installFakeIpc, libraryItem, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;

function chainOf(ids: number[], trims: Record<number, { start: number; end: number }> = {}): ChainView {
  return {
    chainId: `m_${ids[0]}`,
    shots: ids.map((id, i) => ({
      itemId: `m_${id}`,
      position: i + 1,
      parentId: i === 0 ? null : `m_${ids[i - 1]}`,
      sourceImageSha256: null,
      trim: trims[id] ?? null,
      item: libraryItem(id),
    })),
  };
}

const timeline = () => screen.getByRole('region', { name: 'Shot chain timeline' });
const shotNames = () =>
  within(screen.getByRole('list', { name: 'Shots in order' }))
    .getAllByRole('button', { name: /^Shot \d/ })
    .map((b) => b.getAttribute('aria-label'));

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  useStage.getState().reset();
  useChains.getState().reset();
  useToasts.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [model()] });
  ipc.providers.list.mockResolvedValue({ providers: [] });
});
afterEach(cleanup);

describe('the chain timeline', () => {
  it('shows a chain’s shots above the dock, nothing for a take in no chain', async () => {
    ipc.library.chain.mockResolvedValue({ chainId: null, shots: [] });
    useStage.getState().showItem(libraryItem(9));
    const { unmount } = render(<ComposeScreen />);
    await waitFor(() => expect(ipc.library.chain).toHaveBeenCalledWith({ id: 'm_9' }));
    expect(screen.queryByRole('region', { name: 'Shot chain timeline' })).toBeNull();
    unmount();

    ipc.library.chain.mockResolvedValue(chainOf([1, 2]));
    useStage.getState().showItem(libraryItem(2));
    render(<ComposeScreen />);
    await screen.findByRole('region', { name: 'Shot chain timeline' });
    expect(shotNames()).toEqual(['Shot 1: prompt number 1', 'Shot 2: prompt number 2']);
    // Right above the dock.
    const dock = screen.getByRole('region', { name: 'Prompt dock' });
    expect(timeline().nextElementSibling).toBe(dock);
    expect(
      within(timeline())
        .getByRole('button', { name: /^Shot 2/ })
        .getAttribute('aria-current'),
    ).toBe('true');
    // A click puts a shot on the stage.
    fireEvent.click(within(timeline()).getByRole('button', { name: /^Shot 1/ }));
    expect(useStage.getState().focus).toEqual({ kind: 'item', id: 'm_1' });
  });

  it('reorders by keyboard (Alt+←/→) and by the move buttons, keeping the moved shot focused', async () => {
    ipc.library.chain.mockResolvedValue(chainOf([1, 2, 3]));
    ipc.library.moveShot.mockResolvedValue(chainOf([1, 3, 2]));
    useStage.getState().showItem(libraryItem(3));
    render(<ComposeScreen />);
    await screen.findByRole('region', { name: 'Shot chain timeline' });
    const third = within(timeline()).getByRole('button', { name: /^Shot 3/ });
    third.focus();
    fireEvent.keyDown(third, { key: 'ArrowLeft', altKey: true });
    expect(ipc.library.moveShot).toHaveBeenCalledWith({ id: 'm_3', position: 2 });
    // Shown at once, before main answers, and the shot keeps the keyboard.
    expect(shotNames()).toEqual(['Shot 1: prompt number 1', 'Shot 2: prompt number 3', 'Shot 3: prompt number 2']);
    await waitFor(() => expect(document.activeElement?.getAttribute('aria-label')).toBe('Shot 2: prompt number 3'));
    // Without Alt, arrows do nothing here.
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowLeft' });
    expect(ipc.library.moveShot).toHaveBeenCalledTimes(1);

    ipc.library.moveShot.mockResolvedValue(chainOf([3, 1, 2]));
    fireEvent.click(screen.getByRole('button', { name: 'Move shot 2 earlier' }));
    expect(ipc.library.moveShot).toHaveBeenLastCalledWith({ id: 'm_3', position: 1 });
    await waitFor(() => expect(shotNames()[0]).toBe('Shot 1: prompt number 3'));
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Move shot 1 earlier' }).disabled).toBe(true);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Move shot 3 later' }).disabled).toBe(true);
  });

  it('a shot dragged onto another one’s place moves there', async () => {
    ipc.library.chain.mockResolvedValue(chainOf([1, 2, 3]));
    ipc.library.moveShot.mockResolvedValue(chainOf([2, 3, 1]));
    useStage.getState().showItem(libraryItem(1));
    render(<ComposeScreen />);
    await screen.findByRole('region', { name: 'Shot chain timeline' });
    const data = new Map<string, string>();
    const dataTransfer = {
      setData: (type: string, value: string) => void data.set(type, value),
      getData: (type: string) => data.get(type) ?? '',
      get types() {
        return [...data.keys()];
      },
      effectAllowed: 'none',
      dropEffect: 'none',
    };
    fireEvent.dragStart(within(timeline()).getByRole('button', { name: /^Shot 1/ }), { dataTransfer });
    const target = within(timeline())
      .getByRole('button', { name: /^Shot 3/ })
      .closest('li')!;
    fireEvent.dragOver(target, { dataTransfer });
    fireEvent.drop(target, { dataTransfer });
    expect(ipc.library.moveShot).toHaveBeenCalledWith({ id: 'm_1', position: 3 });
    await waitFor(() =>
      expect(shotNames()).toEqual(['Shot 1: prompt number 2', 'Shot 2: prompt number 3', 'Shot 3: prompt number 1']),
    );
  });

  it('a failed move puts the order back and says so', async () => {
    ipc.library.chain.mockResolvedValue(chainOf([1, 2]));
    ipc.library.moveShot.mockRejectedValue(new Error('disk full'));
    useStage.getState().showItem(libraryItem(2));
    render(<ComposeScreen />);
    await screen.findByRole('region', { name: 'Shot chain timeline' });
    fireEvent.click(screen.getByRole('button', { name: 'Move shot 2 earlier' }));
    await waitFor(() => expect(shotNames()).toEqual(['Shot 1: prompt number 1', 'Shot 2: prompt number 2']));
    expect(useToasts.getState().toasts.at(-1)).toMatchObject({
      title: 'Could not move the shot',
      message: 'disk full',
    });
  });

  it('trim handles store the trim as the Library does; both at the clip’s ends use the whole clip', async () => {
    ipc.library.chain.mockResolvedValue(chainOf([1, 2], { 2: { start: 1, end: 3 } }));
    ipc.library.setShotTrim.mockResolvedValue(chainOf([1, 2], { 2: { start: 1.1, end: 3 } }));
    useStage.getState().showItem(libraryItem(2));
    render(<ComposeScreen />);
    await screen.findByRole('region', { name: 'Shot chain timeline' });
    const inPoint = screen.getByRole('slider', { name: 'In point of shot 2' });
    expect(inPoint.getAttribute('aria-valuenow')).toBe('1');
    fireEvent.keyDown(inPoint, { key: 'ArrowRight' });
    expect(inPoint.getAttribute('aria-valuenow')).toBe('1.1');
    // Stored when the keys pause (or the handle loses the focus).
    fireEvent.blur(inPoint);
    await waitFor(() => expect(ipc.library.setShotTrim).toHaveBeenCalledWith({ id: 'm_2', start: 1.1, end: 3 }));
    await waitFor(() => expect(screen.getByRole('button', { name: /^Shot 2: .*\(trimmed 1\.1–3 s\)$/ })).toBeTruthy());

    ipc.library.setShotTrim.mockResolvedValue(chainOf([1, 2]));
    const outPoint = screen.getByRole('slider', { name: 'Out point of shot 2' });
    fireEvent.keyDown(outPoint, { key: 'End' });
    fireEvent.blur(outPoint);
    fireEvent.keyDown(inPoint, { key: 'Home' });
    fireEvent.blur(inPoint);
    await waitFor(() => expect(ipc.library.setShotTrim).toHaveBeenLastCalledWith({ id: 'm_2', clear: true }));
  });

  it('"+ continue" puts the last shot’s last frame in the start-frame slot and focuses the prompt', async () => {
    await act(() => useModels.getState().load());
    ipc.library.chain.mockResolvedValue(chainOf([1, 2]));
    ipc.library.useLastFrame.mockResolvedValue({
      path: '/data/media/frames/m_2-last.png',
      url: '/local-media/work/m_2-last.png',
      mime: 'image/png',
      bytes: 10,
    });
    useStage.getState().showItem(libraryItem(1));
    render(<ComposeScreen />);
    await screen.findByRole('region', { name: 'Shot chain timeline' });
    fireEvent.click(screen.getByRole('button', { name: '+ continue' }));
    await waitFor(() =>
      expect(useCompose.getState().startFrame).toMatchObject({
        continues: 'm_2',
        lastFramePath: '/data/media/frames/m_2-last.png',
      }),
    );
    expect(ipc.library.useLastFrame).toHaveBeenCalledWith({ id: 'm_2' });
    await waitFor(() => expect(document.activeElement).toBe(screen.getByLabelText('Prompt')));
  });
});
