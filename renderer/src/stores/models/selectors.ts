import type { ModelProviderOffer, ModelRecord, ProviderRecord } from '../../../../shared/api/model-records.ts';
import type { MediaKind } from '../../../../shared/api/media.ts';
import { parseModelId } from '../../../../shared/api/model-id.ts';
import { describePriceEntry } from '../../../../shared/api/pricing.ts';
import { formatPrice, formatUnitPrice } from '../../lib/format.ts';
import type { ModelsState } from './initialState.ts';

/**
 * Whether a provider can take a request: not when the service (or Settings) says it has no key
 * or is switched off. A provider the list does not mention, or does not say, counts as usable.
 */
export function isProviderUsable(providers: readonly ProviderRecord[], offerId: string): boolean {
  // Provider records are loose: `configured` and `enabled` are there when the list came from
  // providers.list (ProviderEntry) or a service that reports them.
  const p: Record<string, unknown> | undefined = providers.find((x) => x.id === offerId);
  return p?.['configured'] !== false && p?.['enabled'] !== false;
}

/** The models with only their usable offers; a model left with none is dropped. */
export function usableModels(models: readonly ModelRecord[], providers: readonly ProviderRecord[]): ModelRecord[] {
  return models.flatMap((m) => {
    // A service without offers routes every request itself: the model stays (docs/api.md "Extensions").
    if (!m.providers || m.providers.length === 0) return [m];
    const offers = m.providers.filter((o) => isProviderUsable(providers, o.id));
    if (offers.length === 0) return [];
    return [offers.length === m.providers.length ? m : { ...m, providers: offers }];
  });
}

/**
 * A provider's display name, the one spelling every screen uses (compose, queue, library): its
 * record's name, else the name the item or offer carries, else its id. `local-swift` and "Local
 * Swift (procedural)" are one provider, so the id is only the last resort.
 */
export function providerName(
  providers: readonly ProviderRecord[],
  provider: { id: string; slug?: string | undefined; name?: string | null | undefined },
): string {
  const id = provider.id.toLowerCase();
  const slug = provider.slug?.toLowerCase();
  const record = providers.find(
    (p) =>
      p.id.toLowerCase() === id || p.slug.toLowerCase() === id || (slug !== undefined && p.slug.toLowerCase() === slug),
  );
  return record?.name || provider.name || provider.slug || provider.id;
}

/** `clipdesk/motion:1.1` → `{ key: 'clipdesk/motion', version: '1.1' }`; an unparsable id is its own key. */
export function modelIdParts(modelId: string): { key: string; version: string | null } {
  const parsed = parseModelId(modelId);
  if (!parsed.ok) return { key: modelId, version: null };
  return { key: `${parsed.id.base}/${parsed.id.model}`, version: parsed.id.version };
}

/**
 * A model's display name, the one spelling every screen uses: the catalog's name for the model
 * (as Compose and the library's filter show it), whatever version the id names; else `base/model`.
 * `clipdesk/motion` and `clipdesk/motion:1.1` are one model; the version is shown on its own where
 * it matters (`modelIdParts`).
 */
export function modelName(models: readonly ModelRecord[], modelId: string): string {
  const { key } = modelIdParts(modelId);
  return models.find((m) => `${m.base}/${m.slug}`.toLowerCase() === key || m.id === modelId)?.name ?? key;
}

/** Whether routing would skip the offer now: its provider is down or cooling off. */
export function isOfferDown(providers: readonly ProviderRecord[], offer: ModelProviderOffer): boolean {
  const status = offer.status ?? providers.find((p) => p.id === offer.id)?.status;
  return status === 'unavailable' || status === 'unhealthy';
}

/** Capabilities a model offers: the union of its providers' features. */
export function modelCapabilities(model: ModelRecord): string[] {
  const set = new Set<string>();
  for (const offer of model.providers ?? []) for (const f of offer.features) set.add(f);
  return [...set].sort();
}

export function allCapabilities(models: readonly ModelRecord[], media: MediaKind): string[] {
  const set = new Set<string>();
  for (const m of models) if (m.media === media) for (const c of modelCapabilities(m)) set.add(c);
  return [...set].sort();
}

export function filterModels(
  state: Pick<ModelsState, 'models' | 'search' | 'capabilities'>,
  media: MediaKind,
): ModelRecord[] {
  const q = state.search.trim().toLowerCase();
  return state.models.filter((m) => {
    if (m.media !== media) return false;
    if (q && !`${m.name} ${m.base}/${m.slug} ${m.description ?? ''}`.toLowerCase().includes(q)) return false;
    if (state.capabilities.length > 0) {
      const caps = modelCapabilities(m);
      if (!state.capabilities.every((c) => caps.includes(c))) return false;
    }
    return true;
  });
}

export function findModel(models: readonly ModelRecord[], id: string | null): ModelRecord | undefined {
  if (!id) return undefined;
  return models.find((m) => m.id === id);
}

export function cheapestOffer(model: ModelRecord): ModelProviderOffer | undefined {
  let best: ModelProviderOffer | undefined;
  for (const o of model.providers ?? []) if (!best || o.price < best.price) best = o;
  return best;
}

export function priceUnit(model: ModelRecord, offer?: ModelProviderOffer): 'second' | 'image' {
  return offer?.priceUnit ?? (model.media === 'image' ? 'image' : 'second');
}

/**
 * An offer's price as the picker and the routing panel show it: its price table, compactly, when
 * it has one (`silent $0.200/s · with sound $0.400/s`, docs/providers.md "Prices"), else its one
 * figure (`$0.050 / s`). A service that sends no table gets the figure.
 */
export function offerPriceText(model: ModelRecord, offer: ModelProviderOffer): string {
  if (offer.prices && offer.prices.length > 0)
    return offer.prices.map((entry) => describePriceEntry(entry, formatPrice)).join(' · ');
  return formatUnitPrice(offer.price, priceUnit(model, offer));
}

/** The lowest and highest price per unit among the model's providers. */
export function priceRange(model: ModelRecord): { min: number; max: number } | null {
  if (!model.providers || model.providers.length === 0) return null;
  const prices = model.providers.map((o) => o.price);
  return { min: Math.min(...prices), max: Math.max(...prices) };
}

const CAPABILITY_LABELS: Readonly<Record<string, string>> = {
  text_to_video: 'Text to video',
  image_to_video: 'Start frame',
  text_to_image: 'Text to image',
  style: 'Styles',
  hd: 'HD',
  seed: 'Seed',
  audio: 'Sound',
};

export function capabilityLabel(c: string): string {
  return CAPABILITY_LABELS[c] ?? c.replaceAll('_', ' ');
}
