import type { MediaItem } from '../../shared/api/index.ts';
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

/**
 * Item `i` of a synthetic library of `count` items (benchmarks): every fifth an image, the others
 * video from two models and three sizes, three providers, one item every 20 s up to `now`.
 */
export function syntheticLibraryItem(i: number, count: number, now: number): MediaItem {
  const kind = i % 5 === 0 ? 'image' : 'video';
  return {
    id: `med_${i.toString(16).padStart(24, '0')}`,
    url: `http://127.0.0.1/v1/files/${i}/video.mp4`,
    mime: kind === 'image' ? 'image/png' : 'video/mp4',
    user: 'u',
    media: kind,
    model: kind === 'image' ? 'clipdesk/still' : i % 2 ? 'clipdesk/motion' : 'clipdesk/drift',
    modelSlug: kind === 'image' ? 'clipdesk/still:1.0' : i % 2 ? 'clipdesk/motion:1.1' : 'clipdesk/drift:2.0',
    provider: ['local-swift', 'local-studio', 'local-prism'][i % 3]!,
    providerName: ['Local Swift', 'Local Studio', 'Local Prism'][i % 3]!,
    prompt: syntheticPrompt(i),
    size: kind === 'image' ? '1024x1024' : ['360p', '720p', '1080p'][i % 3]!,
    duration: kind === 'image' ? 0 : 4,
    createdAt: new Date(now - (count - i) * 20_000).toISOString(),
  };
}
