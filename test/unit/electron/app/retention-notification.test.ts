import { describe, expect, it } from 'vitest';
import { retentionNotification } from '../../../../electron/app/mappers.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 1);

describe("the retention guard's events as the page is told them", () => {
  it('a warning says the whole days left, rounded up', () => {
    const warn = (deadline: number) =>
      retentionNotification({ type: 'warning', id: 'med_1', deadline, prompt: 'a fox' }, NOW);
    expect(warn(NOW + 2 * DAY + 1)).toEqual({
      level: 'warning',
      title: 'Deleted in 3 days',
      body: 'a fox',
      jobId: null,
      itemId: 'med_1',
    });
    expect(warn(NOW + DAY)?.title).toBe('Deleted in 1 day');
    expect(warn(NOW - DAY)?.title).toBe('Deleted in 0 days');
  });

  it('a failure is an error notification; saved and lost only change the library', () => {
    expect(retentionNotification({ type: 'failed', id: 'med_1', message: 'disk full' }, NOW)).toEqual({
      level: 'error',
      title: 'Could not save before deletion',
      body: 'disk full',
      jobId: null,
      itemId: 'med_1',
    });
    expect(retentionNotification({ type: 'saved', id: 'med_1', path: '/x' }, NOW)).toBeNull();
    expect(retentionNotification({ type: 'lost', id: 'med_1' }, NOW)).toBeNull();
  });
});
