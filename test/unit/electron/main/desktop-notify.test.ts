import { describe, expect, it } from 'vitest';
import { electronPlatform } from '../../../../electron/main/platform/desktop.ts';
import type { WindowLike } from '../../../../electron/main/platform/types.ts';
import { FakeWindow } from './fakes.ts';

// docs/workflows.md, "Notices": the Electron side of the port stays thin: whether the window has the
// focus, bringing it forward, and a notification whose click runs what plain Node decided.

class FocusableWindow extends FakeWindow {
  focused = false;
  minimized = true;
  calls: string[] = [];
  override isFocused(): boolean {
    return this.focused;
  }
  override isMinimized(): boolean {
    return this.minimized;
  }
  override restore(): void {
    this.calls.push('restore');
  }
  override focus(): void {
    this.calls.push('focus');
  }
}

function platformWith(win: WindowLike | null) {
  const shown: { title: string; click: (() => void) | null }[] = [];
  const Notification = Object.assign(
    class {
      private entry: { title: string; click: (() => void) | null };
      constructor(o: { title: string; body: string }) {
        this.entry = { title: o.title, click: null };
      }
      on(_event: 'click', listener: () => void): this {
        this.entry.click = listener;
        return this;
      }
      show(): void {
        shown.push(this.entry);
      }
    },
    { isSupported: () => true },
  );
  const platform = electronPlatform({
    shell: { openExternal: () => Promise.resolve(), showItemInFolder: () => undefined },
    dialog: { showOpenDialog: () => Promise.resolve({ canceled: true, filePaths: [] }) },
    Notification,
    window: () => win,
  });
  return { platform, shown };
}

describe('the Electron platform’s notifications', () => {
  it('says whether the window has the focus, and brings it forward restored', () => {
    const win = new FocusableWindow({} as never);
    const { platform } = platformWith(win);
    expect(platform.windowFocused()).toBe(false);
    win.focused = true;
    expect(platform.windowFocused()).toBe(true);
    platform.focusWindow();
    expect(win.calls).toEqual(['restore', 'focus']);
    expect(platformWith(null).platform.windowFocused()).toBe(false);
  });

  it('a click runs the callback given; without one it focuses the window', () => {
    const win = new FocusableWindow({} as never);
    const { platform, shown } = platformWith(win);
    let clicked = 0;
    const note = { level: 'success' as const, title: 'Your video is ready', body: 'a fox', jobId: 'j1', itemId: 'i1' };
    platform.notify(note, () => void clicked++);
    shown[0]!.click!();
    expect(clicked).toBe(1);
    expect(win.calls).toEqual([]);
    platform.notify({ ...note, jobId: null, itemId: null });
    shown[1]!.click!();
    expect(win.calls).toEqual(['restore', 'focus']);
  });
});
