import { describe, expect, it } from 'vitest';
import { imageParameterNames, parameterProblem } from '../../../../shared/api/model-parameters.ts';

describe('the image parameter type', () => {
  const rule = { type: 'image' as const };

  it('takes an http or https URL', () => {
    expect(parameterProblem(rule, 'https://cdn.example/end.png')).toBeNull();
    expect(parameterProblem(rule, 'http://127.0.0.1:8787/v1/uploads/upl_1')).toBeNull();
  });

  it.each([42, true, '', 'end.png', 'file:///tmp/end.png', 'data:image/png;base64,AAAA', 'https://'])(
    'refuses %j, saying what it takes',
    (value) => {
      expect(parameterProblem(rule, value)).toBe('an image URL (http or https)');
    },
  );

  it("names the model's image parameters, not its other own parameters nor the interface's image_url", () => {
    expect(
      imageParameterNames({
        image_url: { supported: true },
        loop: { type: 'boolean' },
        end_image_url: { type: 'image' },
      }),
    ).toEqual(['end_image_url']);
  });
});
