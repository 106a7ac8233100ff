import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { LibraryTile, type TileProps } from '../../../../renderer/src/features/library/components/LibraryTile.tsx';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { useStage } from '../../../../renderer/src/stores/stage/index.ts';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { previewUrl } from '../../../../renderer/src/stores/library/selectors.ts';
import { LIBRARY_DRAG_TYPE, type LibraryDragPayload } from '../../../../renderer/src/lib/drag.ts';
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

function tile(entry: LibraryItem, extra: Partial<Pick<TileProps, 'stack' | 'variation'>> = {}) {
  render(
    <LibraryTile
      {...extra}
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
  it('dragged onto a frame slot, says whether it is a video (whose last frame is taken) or an image', () => {
    const dragged = (entry: LibraryItem): LibraryDragPayload => {
      cleanup();
      const data = new Map<string, string>();
      const dataTransfer = { setData: (type: string, value: string) => data.set(type, value), effectAllowed: '' };
      fireEvent.dragStart(tile(entry), { dataTransfer });
      return JSON.parse(data.get(LIBRARY_DRAG_TYPE)!) as LibraryDragPayload;
    };
    const video = libraryItem(3);
    expect(dragged(video)).toMatchObject({ id: video.item.id, media: 'video' });
    const image = { ...video, item: { ...video.item, media: 'image' as const } };
    expect(dragged(image)).toMatchObject({ id: video.item.id, media: 'image' });
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

  it('a stack says its count in its name and on its badge; the badge opens it without selecting the tile', () => {
    const activate = vi.fn();
    render(
      <LibraryTile
        entry={priced(0.04)}
        index={0}
        stack={{ takes: 3, expanded: false }}
        selected={false}
        open={false}
        focused={false}
        now={NOW}
        onActivate={activate}
      />,
    );
    const option = screen.getByRole('option');
    expect(option.getAttribute('aria-label')).toBe('Video: prompt number 3 — stack of 3 takes, closed');
    fireEvent.click(screen.getByTestId('stack-toggle'));
    expect(useLibrary.getState().expanded).toEqual({ m_3: true });
    expect(activate).not.toHaveBeenCalled();
    cleanup();
    expect(tile(priced(0.04), { variation: true }).getAttribute('aria-label')).toBe(
      'Video: prompt number 3 — variation',
    );
  });

  it('opening a take (a double click) puts it on the stage', () => {
    useStage.getState().reset();
    fireEvent.doubleClick(tile(priced(0.04)));
    expect(useStage.getState().focus).toEqual({ kind: 'item', id: 'm_3' });
    expect(useShell.getState().screen).toBe('compose');
  });
});
