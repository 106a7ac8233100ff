import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { Toasts } from '../../../../renderer/src/app/Toasts.tsx';
import { toastError, toastSuccess, useToasts } from '../../../../renderer/src/stores/toasts/index.ts';
import { AUTO_DISMISS_MS } from '../../../../renderer/src/stores/toasts/initialState.ts';

beforeEach(() => {
  vi.useFakeTimers();
  useToasts.getState().reset();
});
afterEach(() => {
  cleanup();
  useToasts.getState().reset();
  vi.useRealTimers();
});

const region = () => screen.getByRole('region', { name: 'Notifications' });

describe('toasts', () => {
  it('success fades by itself; an error stays until dismissed', () => {
    render(<Toasts />);
    act(() => {
      toastError('Export failed', new Error('disk full'));
      toastSuccess('Prompt copied');
    });
    act(() => {
      vi.advanceTimersByTime(AUTO_DISMISS_MS - 1);
    });
    expect(within(region()).getByText('Prompt copied')).toBeTruthy();
    act(() => {
      vi.advanceTimersByTime(1);
    });
    expect(within(region()).queryByText('Prompt copied')).toBeNull();
    act(() => {
      vi.advanceTimersByTime(60_000);
    });
    expect(within(region()).getByRole('alert').textContent).toContain('disk full');
    fireEvent.click(within(region()).getByRole('button', { name: 'Dismiss notification' }));
    expect(useToasts.getState().toasts).toEqual([]);
  });

  it('a success does not fade while the pointer is on it', () => {
    render(<Toasts />);
    act(() => toastSuccess('Export ready', '/videos/clip.gif'));
    const toast = within(region()).getByRole('status');
    fireEvent.mouseEnter(toast);
    act(() => {
      vi.advanceTimersByTime(AUTO_DISMISS_MS * 3);
    });
    expect(within(region()).getByText('/videos/clip.gif')).toBeTruthy();
    fireEvent.mouseLeave(toast);
    act(() => {
      vi.advanceTimersByTime(AUTO_DISMISS_MS);
    });
    expect(within(region()).queryByText('/videos/clip.gif')).toBeNull();
  });

  it('a stack collapses to the newest with "+N more", and opens on demand', () => {
    render(<Toasts />);
    act(() => {
      toastError('First', new Error('one'));
      toastError('Second', new Error('two'));
      toastError('Third', new Error('three'));
    });
    expect(
      within(region())
        .getAllByRole('alert')
        .map((a) => a.querySelector('.toast-title')?.textContent),
    ).toEqual(['Third']);
    const more = within(region()).getByRole('button', { name: '+2 more' });
    expect(more.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(more);
    expect(within(region()).getAllByRole('alert')).toHaveLength(3);
    fireEvent.click(within(region()).getByRole('button', { name: 'Show only the newest' }));
    expect(within(region()).getAllByRole('alert')).toHaveLength(1);
    // Dismissing the newest shows the one behind it.
    fireEvent.click(within(region()).getByRole('button', { name: 'Dismiss notification' }));
    expect(within(region()).getByRole('alert').textContent).toContain('Second');
    expect(within(region()).getByRole('button', { name: '+1 more' })).toBeTruthy();
  });

  it('a success hidden behind a newer toast still fades on time', () => {
    render(<Toasts />);
    act(() => {
      toastSuccess('Download started');
      toastError('Generation failed', new Error('provider down'));
    });
    expect(within(region()).getByRole('button', { name: '+1 more' })).toBeTruthy();
    act(() => {
      vi.advanceTimersByTime(AUTO_DISMISS_MS);
    });
    expect(useToasts.getState().toasts.map((t) => t.title)).toEqual(['Generation failed']);
    expect(within(region()).queryByRole('button', { name: /more/ })).toBeNull();
  });
});
