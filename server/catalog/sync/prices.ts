import type { PriceEntry } from '../../../shared/api/index.ts';
import type { ListedPrice } from './listing.ts';

/**
 * A provider's price in the catalog's units (docs/providers.md, "Syncing the catalog"): the table
 * (`prices`) the preview and the charge read, and the headline (`price`: USD per second of video,
 * or per image) that routing sorts by.
 *
 * - per second → `{unit: 'second'}`, headline the same;
 * - per video → `{unit: 'video', duration}` for the one length the figure is for (the model's
 *   default): the offer then renders only that length, and the headline (usd / duration) is for
 *   sorting only — never what is charged;
 * - per image → `{unit: 'image'}`;
 * - per megapixel → `{unit: 'megapixel'}`, headline at the model's default size.
 * Any other unit (GPU seconds, requests…) cannot be turned into a charge: no price.
 */
export interface CatalogPrice {
  price: number;
  prices: PriceEntry[];
  /** Per video: the one duration the price is for. */
  durations?: number[];
}

const UNITS: Record<string, PriceEntry['unit']> = {
  second: 'second',
  seconds: 'second',
  video_second: 'second',
  video_seconds: 'second',
  'video second': 'second',
  video: 'video',
  videos: 'video',
  per_video: 'video',
  image: 'image',
  images: 'image',
  per_image: 'image',
  megapixel: 'megapixel',
  megapixels: 'megapixel',
  mp: 'megapixel',
};

export function catalogUnit(unit: string): PriceEntry['unit'] | undefined {
  return UNITS[unit.trim().toLowerCase()];
}

export function catalogPrice(
  listed: ListedPrice,
  media: 'video' | 'image',
  defaults: { duration?: number; width?: number; height?: number },
): CatalogPrice | undefined {
  const unit = catalogUnit(listed.unit);
  const usd = listed.usd;
  if (!unit || !Number.isFinite(usd) || usd < 0) return undefined;
  if (media === 'video') {
    if (unit === 'second') return { price: usd, prices: [{ unit, usd }] };
    if (unit === 'video' && defaults.duration) {
      const duration = defaults.duration;
      return { price: round(usd / duration), prices: [{ unit, usd, duration }], durations: [duration] };
    }
    return undefined;
  }
  if (unit === 'image') return { price: usd, prices: [{ unit, usd }] };
  if (unit === 'megapixel') {
    const megapixels = ((defaults.width ?? 1024) * (defaults.height ?? 1024)) / 1_000_000;
    return { price: round(usd * megapixels), prices: [{ unit, usd }] };
  }
  return undefined;
}

function round(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
