import { describe, expect, it } from 'vitest';
import { COMMON_SHARE, wordsToIndex } from '../../../../server/storage/media-search-words.ts';
import type { PromptSample } from '../../../../server/storage/media-search-words.ts';

/** A sample of n prompts, each standing for 1/n of the rows. */
function sample(...prompts: string[]): PromptSample {
  return { prompts: prompts.map((text) => ({ text, share: 1 / prompts.length })) };
}

describe('wordsToIndex', () => {
  const numbered = sample(...Array.from({ length: 100 }, (_, i) => `a red fox number ${i}`));

  it('leaves the words most prompts contain to the recheck', () => {
    expect(wordsToIndex('number 4711', numbered)).toEqual(['4711']);
    expect(wordsToIndex('NUMBER 4711 ocean', numbered)).toEqual(['4711', 'ocean']);
  });

  it('looks for the whole search without a sample, with one word, or when no word is common', () => {
    expect(wordsToIndex('number 4711', { prompts: [] })).toBeNull();
    expect(wordsToIndex('number', numbered)).toBeNull();
    expect(wordsToIndex('4711 ocean', numbered)).toBeNull();
    // Words of fewer than three characters have no trigram: never the index's.
    expect(wordsToIndex('number 47', numbered)).toBeNull();
  });

  it('looks for the whole search when every word is common', () => {
    expect(wordsToIndex('red number', numbered)).toBeNull();
  });

  it('a word at exactly the common share is rare; one prompt more is common', () => {
    const n = 100;
    const at = Math.round(COMMON_SHARE * n);
    const withWord = (k: number) =>
      sample(...Array.from({ length: n }, (_, i) => (i < k ? `kite ${i}` : `plain ${i}`)));
    expect(wordsToIndex('kite plain', withWord(at))).toEqual(['kite']);
    expect(wordsToIndex('kite plain', withWord(at + 1))).toEqual(null);
  });

  it('weighs each sampled prompt by the rows it stands for', () => {
    // One most common value worth half the rows makes its words common.
    const weighted: PromptSample = {
      prompts: [
        { text: 'stock footage', share: 0.5 },
        ...Array.from({ length: 50 }, (_, i) => ({ text: `clip ${i}`, share: 0.01 })),
      ],
    };
    expect(wordsToIndex('stock 77777', weighted)).toEqual(['77777']);
  });

  it('each word once, split at any whitespace', () => {
    expect(wordsToIndex('4711\tnumber\n4711  number', numbered)).toEqual(['4711']);
  });
});
