import type { PriceEntry } from '../../../shared/api/index.ts';
import type { CatalogOffer, OperatorCatalogFile } from '../../providers/catalog-file/schema.ts';
import type { z } from 'zod';

type OfferEntry = NonNullable<z.infer<typeof OperatorCatalogFile>['models'][number]['offers']>[number];

/**
 * What a built-in offer takes from a sync (docs/providers.md, "Syncing the catalog"): the price
 * read from the provider's API, dated, only where one listed figure can say what the built-in rule
 * says. Undefined keeps the built-in rule:
 * - a table of several lines (by size, by sound, by length) is never flattened into one number
 *   (fal lists one `unit_price` for Veo 3, whose sound-on and sound-off prices differ);
 * - a line keyed by size or sound, or in another unit than the listed one, is not the listed figure;
 * - a per-video rule (a fixed length, or a base plus a rate per further second) says more than
 *   one figure for the model's default length.
 * One line in the same unit takes the listed figure and keeps its multipliers and rounding (fal's
 * Ray 2: its 540p base per 5 s, ×2 at 720p); an offer without a table takes the listed price whole.
 */
export function builtinPricePatch(existing: CatalogOffer, synced: CatalogOffer): OfferEntry | undefined {
  const listed = synced.prices?.length === 1 ? synced.prices[0] : undefined;
  const dated = { provider: synced.provider, priceAsOf: synced.priceAsOf, priceSource: synced.priceSource };
  const table = existing.prices ?? [];
  if (table.length === 0)
    return listed?.unit === 'video'
      ? undefined
      : { ...dated, price: synced.price, ...(listed ? { prices: [listed] } : {}) };
  const own = table.length === 1 ? table[0] : undefined;
  if (!own || !listed || !sameRule(own, listed)) return undefined;
  const line: PriceEntry = { ...own, usd: listed.usd };
  // The headline moves with the figure: the rule's other terms (multipliers, rounding) are unchanged.
  const price = own.usd > 0 ? Math.round(((existing.price * listed.usd) / own.usd) * 1e6) / 1e6 : synced.price;
  return { ...dated, price, prices: [line] };
}

function sameRule(own: PriceEntry, listed: PriceEntry): boolean {
  if (own.size !== undefined || own.audio !== undefined) return false;
  if (own.unit !== listed.unit || own.unit === 'video' || own.unit === 'token') return false;
  return own.unit !== 'block' || own.blockSeconds === listed.blockSeconds;
}
