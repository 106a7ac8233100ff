import { describe, expect, it } from 'vitest';
import {
  fieldsFor,
  moreFieldHelp,
  moreFieldKind,
  numberStep,
} from '../../../../renderer/src/features/compose/components/fieldRegistry.ts';

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

describe('More settings fields', () => {
  it('each rule becomes the control of its type, with the step of its range', () => {
    expect(moreFieldKind({ type: 'string', values: ['auto', 'transparent', 'opaque'] })).toBe('select');
    expect(moreFieldKind({ values: [24, 30] })).toBe('select');
    expect(moreFieldKind({ type: 'boolean' })).toBe('switch');
    expect(moreFieldKind({ default: false })).toBe('switch');
    expect(moreFieldKind({ type: 'integer', min: 1, max: 50 })).toBe('number');
    expect(moreFieldKind({ type: 'string', maxLength: 2500 })).toBe('textarea');
    expect(moreFieldKind({ type: 'string', maxLength: 40 })).toBe('text');
    expect(moreFieldKind({})).toBe('text');
    expect(numberStep({ type: 'integer', min: 1, max: 50 })).toBe(1);
    expect(numberStep({ type: 'number', min: 1, max: 20 })).toBe(0.2);
    expect(numberStep({ type: 'number' })).toBe('any');
  });

  it('the help line says the description, the bounds, the default and who ignores it', () => {
    expect(
      moreFieldHelp({ type: 'integer', min: 1, max: 4, default: 4, description: 'Steps per image' }, ['Replicate']),
    ).toBe('Steps per image. From 1 to 4. Default: 4. Ignored by Replicate.');
  });
});
