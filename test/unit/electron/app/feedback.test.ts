import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../../electron/app/events.ts';
import { wireFeedback } from '../../../../electron/app/feedback.ts';
import { browserPlatform, type PlatformPort } from '../../../../electron/app/platform.ts';
import { AppEvent, type NotificationEvent } from '../../../../shared/ipc/schemas/events.ts';
import type { Job } from '../../../../shared/ipc/schemas/jobs.ts';

const job = (state: Job['state'], extra: Partial<Job> = {}): Job => ({
  id: 'j1',
  state,
  request: { kind: 'video', prompt: 'a fox', model: 'm/x', routing: 'optimal', public: true },
  createdAt: '2026-01-01T00:00:00Z',
  startedAt: null,
  finishedAt: null,
  position: null,
  waitingUntil: null,
  attempts: 1,
  upload: null,
  download: null,
  error: null,
  result: null,
  ...extra,
});

describe('OS feedback', () => {
  it('notifies once when a job finishes or fails, and drives the taskbar progress', () => {
    const notes: NotificationEvent[] = [];
    const progress: (number | null)[] = [];
    const platform: PlatformPort = {
      ...browserPlatform,
      // The window is in the background: a desktop notification is wanted (the focus rule is below).
      windowFocused: () => false,
      notify: (n) => notes.push(n),
      setProgress: (p) => progress.push(p),
    };
    const bus = new EventBus();
    let enabled = true;
    wireFeedback(bus, platform, () => enabled);
    bus.publish({ type: 'job.updated', job: job('generating') });
    bus.publish({ type: 'job.updated', job: job('done', { result: { itemIds: ['i1'], price: 0.1, paths: [] } }) });
    bus.publish({ type: 'job.updated', job: job('done') });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ level: 'success', body: 'a fox', itemId: 'i1' });
    expect(progress).toEqual([0.5, null]);
    bus.publish({
      type: 'job.updated',
      job: job('failed', { id: 'j2', error: { code: 'provider_unavailable', message: 'All providers failed' } }),
    });
    expect(notes[1]).toMatchObject({ level: 'error', body: 'All providers failed' });
    enabled = false;
    bus.publish({ type: 'job.updated', job: job('failed', { id: 'j3' }) });
    expect(notes).toHaveLength(2);
  });
});

// docs/workflows.md, "Notices": a finished job's desktop notification shows only while the window is
// not focused, and a click on it focuses the window and asks the page to put the take on the stage.
const done = (id: string, itemId: string) => job('done', { id, result: { itemIds: [itemId], price: 0.1, paths: [] } });

interface FakeDesktop {
  focused: boolean;
  focusCalls: number;
  shown: { note: NotificationEvent; click: (() => void) | undefined }[];
  platform: PlatformPort;
}

/** A fake of the desktop: whether the window has the focus, the notifications shown, the focus calls. */
function fakeDesktop(): FakeDesktop {
  const desktop: FakeDesktop = { focused: false, focusCalls: 0, shown: [], platform: browserPlatform };
  desktop.platform = {
    ...browserPlatform,
    capabilities: { ...browserPlatform.capabilities, osNotifications: true },
    notify: (note, click) => void desktop.shown.push({ note, click }),
    windowFocused: () => desktop.focused,
    focusWindow: () => void desktop.focusCalls++,
  };
  return desktop;
}

describe('desktop notifications of finished jobs', () => {
  it('notify only while the window is not focused', () => {
    const desktop = fakeDesktop();
    const bus = new EventBus();
    wireFeedback(bus, desktop.platform, () => true);
    desktop.focused = true;
    bus.publish({ type: 'job.updated', job: done('j1', 'i1') });
    expect(desktop.shown).toHaveLength(0);
    desktop.focused = false;
    bus.publish({ type: 'job.updated', job: done('j2', 'i2') });
    expect(desktop.shown).toHaveLength(1);
    expect(desktop.shown[0]!.note).toMatchObject({ level: 'success', jobId: 'j2', itemId: 'i2' });
  });

  it('a click focuses the window and sends the page a valid event to show the take on the stage', () => {
    const desktop = fakeDesktop();
    const bus = new EventBus();
    const events: AppEvent[] = [];
    bus.on((e) => events.push(e));
    wireFeedback(bus, desktop.platform, () => true);
    bus.publish({ type: 'job.updated', job: done('j1', 'i1') });
    events.length = 0;
    desktop.shown[0]!.click!();
    expect(desktop.focusCalls).toBe(1);
    expect(events).toEqual([{ type: 'stage.show', take: { jobId: 'j1', itemId: 'i1' } }]);
    // The message the page receives is one the IPC contract's event schema accepts.
    expect(AppEvent.parse(events[0])).toEqual(events[0]);
  });

  it('a failed job notifies when unfocused, and its click only focuses the window', () => {
    const desktop = fakeDesktop();
    const bus = new EventBus();
    const events: AppEvent[] = [];
    wireFeedback(bus, desktop.platform, () => true);
    bus.on((e) => events.push(e));
    bus.publish({ type: 'job.updated', job: job('failed', { error: { code: 'x', message: 'All providers failed' } }) });
    expect(desktop.shown[0]!.note).toMatchObject({ level: 'error', body: 'All providers failed' });
    events.length = 0;
    desktop.shown[0]!.click?.();
    expect(desktop.focusCalls).toBe(1);
    expect(events).toEqual([]);
  });

  it('the event schema refuses a show-take message without a job id', () => {
    expect(AppEvent.safeParse({ type: 'stage.show', take: { jobId: '', itemId: 'i1' } }).success).toBe(false);
    expect(AppEvent.safeParse({ type: 'stage.show', take: { itemId: 'i1' } }).success).toBe(false);
  });
});
