import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { DetailPanel } from '../../../../renderer/src/features/library/components/DetailPanel.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, libraryItem, model } from '../fixtures.ts';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');

beforeEach(() => {
  installFakeIpc();
  useLibrary.getState().reset();
  useCompose.getState().reset();
  useModels.getState().reset();
  useShell.getState().reset();
});
afterEach(cleanup);

const details = () => screen.getByRole('complementary', { name: 'Item details' });
const actions = () => within(details()).getByRole('group', { name: 'Actions' });

describe('the Library detail panel', () => {
  it('an own video: player, what is known about it, every action and the export', () => {
    render(<DetailPanel entry={libraryItem(7, { localPath: '/downloads/m_7.mp4' })} now={NOW} feed={false} />);
    expect(within(details()).getByLabelText('Player')).toBeTruthy();
    expect(within(details()).getByText('Downloaded, so it is kept: the service does not delete it.')).toBeTruthy();
    const meta = within(details()).getByText('Duration').parentElement!;
    expect(within(meta).getByText('4s')).toBeTruthy();
    expect(within(meta).getByText('/downloads/m_7.mp4')).toBeTruthy();
    const names = within(actions())
      .getAllByRole('button')
      .map((b) => b.textContent);
    expect(names).toEqual([
      'Show on stage',
      'Download again',
      '☆ Favourite',
      'Copy prompt',
      'Regenerate',
      'Use last frame',
      'Continue this shot',
      'Make variations ×3',
    ]);
    expect(within(details()).getByLabelText('Export format')).toBeTruthy();
  });

  it('someone else’s item in the public feed: only copy and regenerate, no export', () => {
    render(<DetailPanel entry={libraryItem(3)} now={NOW} feed />);
    const names = within(actions())
      .getAllByRole('button')
      .map((b) => b.textContent);
    expect(names).toEqual(['Show on stage', 'Copy prompt', 'Regenerate']);
    expect(within(details()).queryByLabelText('Export format')).toBeNull();
  });

  it('a lost item says so instead of counting days', () => {
    render(<DetailPanel entry={libraryItem(1, { lost: true })} now={NOW} feed={false} />);
    expect(within(details()).getByText('The service deleted this item before it was downloaded.')).toBeTruthy();
    expect(within(details()).queryByText(/unless kept/)).toBeNull();
    expect(within(actions()).getByRole<HTMLButtonElement>('button', { name: 'Download' }).disabled).toBe(true);
  });

  it('Regenerate goes back to Compose with the item’s prompt and model', () => {
    useModels.setState({ models: [model()] });
    render(<DetailPanel entry={libraryItem(5)} now={NOW} feed={false} />);
    fireEvent.click(within(actions()).getByRole('button', { name: 'Regenerate' }));
    expect(useCompose.getState().prompt).toBe('prompt number 5');
    expect(useCompose.getState().modelId).toBe('mdl_a');
    expect(useShell.getState().screen).toBe('compose');
  });

  it('an image becomes the start frame of a new video', () => {
    const image = libraryItem(2);
    image.item = { ...image.item, media: 'image', mime: 'image/png' };
    render(<DetailPanel entry={image} now={NOW} feed={false} />);
    fireEvent.click(within(actions()).getByRole('button', { name: 'Use as start frame' }));
    expect(useCompose.getState().media).toBe('video');
    expect(useCompose.getState().startFrame).toMatchObject({ source: 'library', mediaId: 'm_2' });
    expect(useShell.getState().screen).toBe('compose');
  });
});
