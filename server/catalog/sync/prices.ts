import type { PriceEntry } from '../../../shared/api/index.ts';
import type { ListedPrice } from './listing.ts';

/**
 * A provider's price in the catalog's units (docs/providers.md, "Syncing the catalog"): the table
 * (`prices`) the preview and the charge read, and the headline (`price`: USD per second of video,
 * or per image) that routing sorts by.
 *
 * - per second ("seconds", "video seconds") → `{unit: 'second'}`, headline the same;
 * - per block of N seconds ("5 seconds") → `{unit: 'block', blockSeconds: N}`, a started block
 *   charged whole; headline usd / N;
 * - per video ("videos"; "generations" of a video model) → `{unit: 'video', duration}` for the one
 *   length the figure is for (the model's default): the offer then renders only that length, and
 *   the headline (usd / duration) is for sorting only — never what is charged;
 * - per image ("images"; "generations" of an image model) → `{unit: 'image'}`;
 * - per megapixel ("megapixels", "processed megapixels") → `{unit: 'megapixel', rounding: 'up'}`:
 *   fal bills whole megapixels, rounded up; headline at the model's default size.
 * Any other unit ("units", GPU seconds, requests…) cannot be turned into a charge: the result
 * names it, and the sync reports the model as unpriced with that unit.
 */
export interface CatalogPrice {
  price: number;
  prices: PriceEntry[];
  /** Per video: the one duration the price is for. */
  durations?: number[];
}

/** A listed price the catalog cannot express: the unit, as the provider wrote it. */
export interface UnmappedPrice {
  unpricedUnit: string;
}

/** A listed unit read into the catalog's terms; undefined when it is none of them. */
type ListedUnit =
  { unit: 'second' | 'video' | 'image' | 'megapixel' | 'generation' } | { unit: 'block'; seconds: number };

const WORDS: Record<string, ListedUnit['unit']> = {
  second: 'second',
  seconds: 'second',
  sec: 'second',
  'video second': 'second',
  'video seconds': 'second',
  video: 'video',
  videos: 'video',
  image: 'image',
  images: 'image',
  megapixel: 'megapixel',
  megapixels: 'megapixel',
  mp: 'megapixel',
  'processed megapixel': 'megapixel',
  'processed megapixels': 'megapixel',
  generation: 'generation',
  generations: 'generation',
};

/** fal's unit words: case, `_`, a leading "per" and extra spaces do not matter; "5 seconds" is a block. */
export function listedUnit(unit: string): ListedUnit | undefined {
  const words = unit
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, ' ')
    .replace(/^per /, '');
  const counted = /^(\d+(?:\.\d+)?) ?(?:s|secs?|seconds?)$/.exec(words);
  if (counted) {
    const seconds = Number(counted[1]);
    if (seconds > 0) return seconds === 1 ? { unit: 'second' } : { unit: 'block', seconds };
    return undefined;
  }
  const word = WORDS[words];
  return word ? ({ unit: word } as ListedUnit) : undefined;
}

export function catalogPrice(
  listed: ListedPrice,
  media: 'video' | 'image',
  defaults: { duration?: number; width?: number; height?: number },
): CatalogPrice | UnmappedPrice {
  const read = listedUnit(listed.unit);
  const usd = listed.usd;
  const unmapped = { unpricedUnit: listed.unit };
  if (!read || !Number.isFinite(usd) || usd < 0) return unmapped;
  // A generation is one item: a video of a video model, an image of an image model.
  const unit = read.unit === 'generation' ? (media === 'video' ? 'video' : 'image') : read.unit;
  if (media === 'video') {
    if (unit === 'second') return { price: usd, prices: [{ unit, usd }] };
    if (read.unit === 'block')
      return { price: round(usd / read.seconds), prices: [{ unit: 'block', usd, blockSeconds: read.seconds }] };
    if (unit === 'video' && defaults.duration) {
      const duration = defaults.duration;
      return { price: round(usd / duration), prices: [{ unit, usd, duration }], durations: [duration] };
    }
    return unmapped;
  }
  if (unit === 'image') return { price: usd, prices: [{ unit, usd }] };
  if (unit === 'megapixel') {
    const pixels = (defaults.width ?? 1024) * (defaults.height ?? 1024);
    // fal bills whole megapixels, rounded up: the headline is the default size's charge.
    const billed = Math.ceil(Math.round(pixels) / 1_000_000);
    return { price: round(usd * billed), prices: [{ unit, usd, rounding: 'up' }] };
  }
  return unmapped;
}

export function isUnmapped(price: CatalogPrice | UnmappedPrice): price is UnmappedPrice {
  return 'unpricedUnit' in price;
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
