import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../../electron/app/events.ts';
import { wireFeedback } from '../../../../electron/app/feedback.ts';
import { browserPlatform, type PlatformPort } from '../../../../electron/app/platform.ts';
import type { Job } from '../../../../shared/ipc/schemas/jobs.ts';
import type { NotificationEvent } from '../../../../shared/ipc/schemas/events.ts';

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
      // The window is in the background: a desktop notification is wanted (job-notices.test.ts has the focus rule).
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
