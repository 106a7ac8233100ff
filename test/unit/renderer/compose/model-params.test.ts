import { describe, expect, it } from 'vitest';
import { modelParams } from '../../../../renderer/src/stores/compose/modelParams.ts';
import { model } from '../fixtures.ts';

const parameters = {
  size: { values: ['720p'], default: '720p' },
  aspect_ratio: { values: ['16:9'] },
  negative_prompt: { type: 'string' as const, maxLength: 100 },
  loop: { type: 'boolean' as const },
};
const names = (m: ReturnType<typeof model>, provider: string | null = null) =>
  modelParams(m, provider).map((p) => [p.name, p.ignoredBy]);

describe('which own parameters More settings shows', () => {
  it('those some offer honours, with the offers that ignore them; none that no offer honours', () => {
    const m = model({
      parameters,
      providers: [
        { id: 'a', slug: 'a', name: 'A', price: 1, features: ['text_to_video'], parameters: ['negative_prompt'] },
        { id: 'b', slug: 'b', price: 1, features: ['text_to_video'], parameters: [] },
      ],
    });
    expect(names(m)).toEqual([['negative_prompt', ['b']]]);
    expect(names(m, 'b')).toEqual([]);
  });

  it('all of them when the service does not say what its offers honour', () => {
    const m = model({ parameters, providers: [{ id: 'a', slug: 'a', price: 1, features: ['text_to_video'] }] });
    expect(names(m)).toEqual([
      ['negative_prompt', []],
      ['loop', []],
    ]);
    expect(names(model({ parameters, providers: undefined }))).toHaveLength(2);
  });
});
