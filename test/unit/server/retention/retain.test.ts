import { describe, expect, it } from 'vitest';
import { retainedUntil } from '../../../../server/retention/retain.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 10);

describe('retaining an item (POST /media/:id/retain)', () => {
  it('forever removes the deadline', () => {
    expect(retainedUntil(NOW + DAY, NOW, { forever: true })).toBeNull();
  });

  it('adds the days to what is left, never shortening it', () => {
    expect(retainedUntil(NOW + 3 * DAY, NOW, { days: 2 })).toBe(NOW + 5 * DAY);
    // A deadline already passed (the sweep has not run yet) counts from now.
    expect(retainedUntil(NOW - DAY, NOW, { days: 2 })).toBe(NOW + 2 * DAY);
    expect(retainedUntil(null, NOW, { days: 1 })).toBe(NOW + DAY);
  });

  it('a body with neither is the spec 400', () => {
    expect(() => retainedUntil(NOW, NOW, {})).toThrow(
      expect.objectContaining({ code: 'invalid_request_error', message: 'send {"days": N} or {"forever": true}' }),
    );
  });
});
