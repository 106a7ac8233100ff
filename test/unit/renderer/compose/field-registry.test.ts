import { describe, expect, it } from 'vitest';
import { fieldsFor } from '../../../../renderer/src/features/compose/components/fieldRegistry.ts';

describe('compose parameter fields', () => {
  it('a model with fixed durations offers a choice of exactly those, not a slider of seconds no provider makes', () => {
    const fields = fieldsFor(
      { duration: { min: 5, max: 10, default: 5, values: [5, 10] }, size: { values: ['720p'], default: '720p' } },
      'video',
    );
    expect(fields[0]).toMatchObject({ kind: 'choice', key: 'duration', values: ['5', '10'], numeric: true, unit: 's' });
  });

  it('a duration range is a slider', () => {
    const fields = fieldsFor({ duration: { min: 2, max: 8, default: 4 } }, 'video');
    expect(fields[0]).toMatchObject({ kind: 'range', key: 'duration', min: 2, max: 8, step: 1 });
  });
});
