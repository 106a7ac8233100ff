/** Words of the seeded libraries' prompts: a few, so filters and searches match many items. */
export const PROMPT_WORDS = [
  'red',
  'fox',
  'sunset',
  'ocean',
  'neon',
  'city',
  'forest',
  'glass',
  'orbit',
  'storm',
  'quiet',
  'lantern',
  'river',
  'desert',
];

/**
 * The prompt of seeded item `i` (benchmarks and end-to-end tests): three words that repeat across
 * items, and a number that makes each prompt unique and findable ("number 4242").
 */
export function syntheticPrompt(i: number): string {
  const w = PROMPT_WORDS;
  return `${w[i % w.length]} ${w[(i * 7) % w.length]} ${w[(i * 13) % w.length]} number ${i}`;
}
