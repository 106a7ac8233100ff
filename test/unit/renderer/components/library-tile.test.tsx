import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { LibraryTile } from '../../../../renderer/src/features/library/components/LibraryTile.tsx';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { previewUrl } from '../../../../renderer/src/stores/library/selectors.ts';
import { installFakeIpc, libraryItem } from '../fixtures.ts';

const NOW = Date.parse('2026-01-02T00:00:00.000Z');

beforeEach(() => {
  installFakeIpc();
  useLibrary.getState().reset();
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

function tile(entry: LibraryItem) {
  render(
    <LibraryTile
      entry={entry}
      index={0}
      selected={false}
      open={false}
      focused={false}
      now={NOW}
      onActivate={() => {}}
    />,
  );
  return screen.getByRole('option');
}

const priced = (price: number | undefined, over: Partial<LibraryItem['item']> = {}): LibraryItem => {
  const entry = libraryItem(3);
  return { ...entry, item: { ...entry.item, ...(price === undefined ? {} : { price }), ...over } };
};

describe('a library tile', () => {
  it('shows what the take cost, and "—" when the service did not say', () => {
    tile(priced(0.04));
    expect(screen.getByTestId('tile-price').textContent).toBe('$0.040');
    cleanup();
    tile(priced(undefined));
    expect(screen.getByTestId('tile-price').textContent).toBe('—');
  });

  it('an upload reads as an input, not a prompt-less "upload/file · Upload" take', () => {
    const option = tile(
      priced(0, { model: 'upload/file', prompt: '', media: 'image', size: '1280x720', providerName: 'Upload' }),
    );
    expect(option.getAttribute('aria-label')).toBe('Image: uploaded input');
    expect(screen.getByText('Uploaded image')).toBeTruthy();
    expect(screen.getByText('Input · 1280x720')).toBeTruthy();
    expect(screen.getByTestId('tile-price').textContent).toBe('Input');
    expect(option.textContent).not.toContain('upload/file');
  });

  it('plays the small preview when the pointer rests on it, and stops when it leaves', () => {
    vi.useFakeTimers();
    const entry = priced(0.04, {
      bytes: 9_000_000,
      formats: [
        { mime: 'video/mp4', url: 'http://127.0.0.1:1/media/m_3.mp4', bytes: 9_000_000 },
        { mime: 'video/webm', url: 'http://127.0.0.1:1/media/m_3.small.webm', bytes: 400_000 },
      ],
    });
    const option = tile(entry);
    fireEvent.pointerEnter(option);
    expect(screen.queryByTestId('hover-play')).toBeNull();
    act(() => {
      vi.advanceTimersByTime(300);
    });
    expect(screen.getByTestId('hover-play').getAttribute('src')).toBe('http://127.0.0.1:1/media/m_3.small.webm');
    fireEvent.pointerLeave(option);
    expect(screen.queryByTestId('hover-play')).toBeNull();
  });
});

describe('the preview rendition', () => {
  it('is the app’s own proxy first, else the smallest video the service sent, never the master when smaller exists', () => {
    const entry = libraryItem(4, { localUrl: 'http://127.0.0.1:1/local-media/m_4.mp4' });
    expect(previewUrl(entry)).toBe('http://127.0.0.1:1/local-media/m_4.mp4');
    expect(previewUrl({ ...entry, previewUrl: 'http://127.0.0.1:1/local-media/m_4.preview.mp4' })).toBe(
      'http://127.0.0.1:1/local-media/m_4.preview.mp4',
    );
  });
});
