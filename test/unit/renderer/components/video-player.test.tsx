import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { DetailPanel } from '../../../../renderer/src/features/library/components/DetailPanel.tsx';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { installFakeIpc, libraryItem } from '../fixtures.ts';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');

beforeEach(() => {
  installFakeIpc();
  useLibrary.getState().reset();
});
afterEach(cleanup);

const details = () => screen.getByRole('complementary', { name: 'Item details' });
const player = () => within(details()).getByLabelText<HTMLVideoElement>('Player');
const muteToggle = () => within(details()).getByRole<HTMLButtonElement>('button', { name: /Mute/ });

describe('the player’s sound toggle', () => {
  it('is a toggle button that starts with the sound on', () => {
    render(<DetailPanel entry={libraryItem(1)} now={NOW} feed={false} />);
    expect(muteToggle().getAttribute('aria-pressed')).toBe('false');
    expect(player().muted).toBe(false);
  });

  it('draws its icon as inline SVG, not a glyph a system font may lack', () => {
    render(<DetailPanel entry={libraryItem(1)} now={NOW} feed={false} />);
    expect(muteToggle().querySelector('svg path')).not.toBeNull();
    expect(muteToggle().textContent?.trim()).toBe('Mute');
    const before = muteToggle().querySelector('path')?.getAttribute('d');
    fireEvent.click(muteToggle());
    expect(muteToggle().querySelector('path')?.getAttribute('d')).not.toBe(before);
  });

  it('mutes and unmutes the player on click', () => {
    render(<DetailPanel entry={libraryItem(1)} now={NOW} feed={false} />);
    fireEvent.click(muteToggle());
    expect(muteToggle().getAttribute('aria-pressed')).toBe('true');
    expect(player().muted).toBe(true);
    fireEvent.click(muteToggle());
    expect(muteToggle().getAttribute('aria-pressed')).toBe('false');
    expect(player().muted).toBe(false);
  });

  it('works from the keyboard: Space or Enter on the focused button', async () => {
    const user = userEvent.setup();
    render(<DetailPanel entry={libraryItem(1)} now={NOW} feed={false} />);
    muteToggle().focus();
    expect(document.activeElement).toBe(muteToggle());
    await user.keyboard(' ');
    expect(muteToggle().getAttribute('aria-pressed')).toBe('true');
    await user.keyboard('{Enter}');
    expect(muteToggle().getAttribute('aria-pressed')).toBe('false');
  });

  it('remembers the choice for the next clip opened in this session', () => {
    const { rerender } = render(<DetailPanel entry={libraryItem(1)} now={NOW} feed={false} />);
    fireEvent.click(muteToggle());
    const first = player();
    rerender(<DetailPanel entry={libraryItem(2)} now={NOW} feed={false} />);
    // A new clip gets a new player element, muted like the last one.
    expect(player()).not.toBe(first);
    expect(player().muted).toBe(true);
    expect(muteToggle().getAttribute('aria-pressed')).toBe('true');
    cleanup();
    render(<DetailPanel entry={libraryItem(3)} now={NOW} feed={false} />);
    expect(player().muted).toBe(true);
  });

  it('follows the player’s own mute control, so the two never disagree', () => {
    render(<DetailPanel entry={libraryItem(1)} now={NOW} feed={false} />);
    const video = player();
    // jsdom fires volumechange when `muted` is set, as a browser does when its own control is used.
    act(() => {
      video.muted = true;
    });
    expect(muteToggle().getAttribute('aria-pressed')).toBe('true');
    expect(useLibrary.getState().playerMuted).toBe(true);
  });

  it('an image has no sound toggle', () => {
    const image = libraryItem(2);
    image.item = { ...image.item, media: 'image', mime: 'image/png' };
    render(<DetailPanel entry={image} now={NOW} feed={false} />);
    expect(within(details()).queryByRole('button', { name: /Mute/ })).toBeNull();
  });
});
