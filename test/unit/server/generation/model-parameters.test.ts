import { describe, expect, it } from 'vitest';
import { ModelParameters } from '../../../../shared/api/index.ts';
import { modelParameterValues } from '../../../../server/generation/model-parameters.ts';

const rules = ModelParameters.parse({
  duration: { min: 5, max: 10, default: 5 },
  size: { values: ['720p'], default: '720p' },
  audio: { type: 'boolean' },
  negative_prompt: { type: 'string', maxLength: 10 },
  cfg_scale: { type: 'number', min: 0, max: 1 },
  steps: { type: 'integer', min: 1, max: 50 },
  background: { values: ['auto', 'opaque'] },
});
const values = (raw: Record<string, unknown>) => modelParameterValues(raw, 'm/x', rules);
const refusal = (raw: Record<string, unknown>) => {
  try {
    values(raw);
  } catch (error) {
    return error as { status: number; code: string; message: string };
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
};

describe('model parameters', () => {
  it('returns the model’s own parameters, leaving interface fields and strangers to others', () => {
    expect(
      values({
        prompt: 'p',
        duration: 5,
        size: '720p',
        audio: true,
        negative_prompt: 'no cats',
        cfg_scale: 0.5,
        steps: 20,
        background: 'auto',
        stranger: 1,
        seed_of_doubt: null,
      }),
    ).toEqual({ audio: true, negative_prompt: 'no cats', cfg_scale: 0.5, steps: 20, background: 'auto' });
  });

  it('a null counts as not given', () => {
    expect(values({ negative_prompt: null })).toEqual({});
  });

  it('refuses values outside their rule with a clear 400', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ audio: 'yes' }, /audio: m\/x takes true or false/],
      [{ negative_prompt: 7 }, /negative_prompt: m\/x takes a string/],
      [{ negative_prompt: 'x'.repeat(11) }, /at most 10 characters, not 11/],
      [{ cfg_scale: 2 }, /cfg_scale: m\/x takes at most 1, not 2/],
      [{ cfg_scale: -1 }, /at least 0/],
      [{ cfg_scale: '0.5' }, /takes a number/],
      [{ steps: 2.5 }, /steps: m\/x takes a whole number/],
      [{ background: 'transparent' }, /one of auto, opaque/],
      [{ background: { nested: true } }, /one of auto, opaque|a string/],
    ];
    for (const [raw, message] of cases) {
      const error = refusal(raw);
      expect(error, JSON.stringify(raw)).toMatchObject({ status: 400, code: 'invalid_request_error' });
      expect(error.message).toMatch(message);
    }
  });
});
