import type { ModelProviderOffer, ModelRecord, ProviderRecord } from '../../../../shared/api/model-records.ts';
import { offerRendersSize } from '../../../../shared/api/offer-sizes.ts';
import { priceEntryFor } from '../../../../shared/api/pricing.ts';
import type { RoutingPreviewRow } from '../../../../shared/api/routing.ts';
import { formatUnitPrice } from '../../lib/format.ts';
import { priceRange, priceUnit, providerName } from '../models/selectors.ts';

/**
 * Why routing cannot use the model's cheaper providers for this size: the model card shows the
 * cheapest offer ("from $0.010 / s"), and a size only dearer providers render (1080p) puts every
 * estimate above it. Null when the chosen provider is the cheapest, or the size is not the reason.
 */
export interface SizeLimit {
  /** "only Local Prism renders 1080p", or "the cheaper providers do not render 1080p". */
  why: string;
  /** The card's "from" price and the chosen provider's, per unit. */
  from: string;
  chosen: string;
}

/**
 * An offer's price per second (or image) at this size: its table's line for the size where it has
 * one (docs/providers.md, "Prices"), else its headline figure.
 */
function unitAt(model: ModelRecord, offer: ModelProviderOffer, size: string): number {
  const entry = priceEntryFor(offer.prices, { media: model.media, size });
  return entry && (entry.unit === 'second' || entry.unit === 'image') ? entry.usd : offer.price;
}

function offerOf(model: ModelRecord, providerId: string): ModelProviderOffer | undefined {
  return (model.providers ?? []).find((o) => o.id === providerId || o.slug === providerId);
}

export function sizeLimit(
  model: ModelRecord,
  size: string | undefined,
  providerId: string,
  providers: readonly ProviderRecord[],
): SizeLimit | null {
  const chosen = offerOf(model, providerId);
  const range = priceRange(model);
  if (!size || !chosen || !range) return null;
  const chosenUnit = unitAt(model, chosen, size);
  if (chosenUnit <= range.min) return null;
  const offers = model.providers ?? [];
  const cheaper = offers.filter((o) => unitAt(model, o, size) < chosenUnit);
  if (cheaper.some((o) => offerRendersSize(o.sizes, model.media, size))) return null;
  const renderers = offers.filter((o) => offerRendersSize(o.sizes, model.media, size));
  const unit = priceUnit(model, chosen);
  return {
    why:
      renderers.length === 1
        ? `only ${providerName(providers, renderers[0]!)} renders ${size}`
        : `the cheaper providers do not render ${size}`,
    from: formatUnitPrice(range.min, priceUnit(model, offers[0])),
    chosen: formatUnitPrice(chosenUnit, unit),
  };
}

/**
 * What the routing cards would all say alike, said once instead of on each card: null when their
 * explanations differ (then each card's tells it apart from the others).
 */
export function sharedRouteReason(
  rows: readonly RoutingPreviewRow[],
  limit: SizeLimit | null,
): { sameProvider: boolean; reason: string } | null {
  const first = rows[0];
  if (rows.length < 2 || !first || rows.some((r) => r.error || !r.provider || r.reason !== first.reason)) return null;
  const sameProvider = rows.every((r) => r.provider!.id === first.provider!.id && r.price === first.price);
  return { sameProvider, reason: sameProvider && limit ? limit.why : first.reason };
}
