import type { PriceEntry, PriceUnit } from '../../../shared/api/index.ts';

/**
 * A price a provider's listing states is untrusted like the rest of it (docs/providers.md,
 * "Syncing the catalog"). A figure outside these bounds is a mistake or an attack, never a
 * price: 1e308 USD per second made every charge Infinity. The bounds are far above any model
 * today (the dearest built-in is 0.40 USD per second, 1.27 per video) and below the sums at which
 * a charge stops being a sensible number; the built-in catalog passes the same check.
 */
export const SANE_MAX_USD: Readonly<Record<PriceUnit, number>> = {
  second: 10,
  // A block is a few seconds (fal's "per 5 seconds"): at most a minute of the per-second bound.
  block: 600,
  video: 100,
  image: 10,
  megapixel: 10,
  // The dearest token today is an image output token at 40 USD per million.
  token: 0.001,
};

/** An offer's prices: the headline (per second of video, or per image) and its table. */
export interface OfferPrices {
  price: number;
  prices?: readonly PriceEntry[] | undefined;
}

/** Why the offer's price is absurd (one line), or undefined when every figure of it is sane. */
export function absurdPrice(offer: OfferPrices, media: 'video' | 'image'): string | undefined {
  const headline = outOfRange(offer.price, media === 'video' ? 'second' : 'image');
  if (headline) return headline;
  for (const entry of offer.prices ?? []) {
    const why =
      outOfRange(entry.usd, entry.unit) ??
      (entry.extraSecondUsd === undefined ? undefined : outOfRange(entry.extraSecondUsd, 'second'));
    if (why) return why;
  }
  return undefined;
}

function outOfRange(usd: number, unit: PriceUnit): string | undefined {
  const max = SANE_MAX_USD[unit];
  if (Number.isFinite(usd) && usd >= 0 && usd <= max) return undefined;
  return `${usd} USD per ${unit} is outside 0–${max}`;
}
