import type { SyncedProvider, UnpricedModel } from '../../../shared/api/index.ts';
import type { z } from 'zod';
import { ownParameters } from '../../providers/catalog-file/load.ts';
import { CatalogModel } from '../../providers/catalog-file/schema.ts';
import type { CatalogFile, CatalogOffer, OperatorCatalogFile } from '../../providers/catalog-file/schema.ts';
import { falPriceSource } from './fal-listing.ts';
import { IMAGE_SIZE_RULE, readInputSchema } from './input-schema.ts';
import type { SchemaReading } from './input-schema.ts';
import type { ListedModel, ProviderListing, SyncTask } from './listing.ts';
import { catalogIdFor, mappingFor } from './mapping.ts';
import type { ProviderModelMap } from './mapping.ts';
import { absurdPrice } from './price-sanity.ts';
import { catalogPrice, isUnmapped } from './prices.ts';
import { builtinPricePatch } from './builtin-prices.ts';

/**
 * The operator catalog a sync writes (docs/providers.md, "Syncing the catalog"): the last one,
 * with the offers of every provider read this time replaced by what its listing says. Entries for
 * built-in models change only their offers' prices; a model the catalog does not have comes in
 * whole. A provider that could not be read keeps its part of the last catalog.
 */
export type OperatorDocument = z.infer<typeof OperatorCatalogFile>;
type ModelEntry = OperatorDocument['models'][number];
type OfferEntry = NonNullable<ModelEntry['offers']>[number];

export interface BuildInput {
  builtin: CatalogFile;
  previous: OperatorDocument | undefined;
  read: Array<{ provider: SyncedProvider; listing: ProviderListing }>;
  map: ProviderModelMap;
  /** The sync's day, YYYY-MM-DD: every price read now is dated by it. */
  day: string;
  falPlatformUrl: string;
}

export interface BuildCounts {
  /** Listed models left out for want of a price (none from the API, none kept by hand). */
  unpriced: number;
  /** Listed models whose offer did not fit the catalog's rules. */
  unfit: number;
  /** Listed models left out for a price outside the sane range (price-sanity.ts). */
  absurd: number;
  /** Listed prices the catalog could not take, with their unit (left out, or the built-in rule kept). */
  unpricedModels: UnpricedModel[];
}

const COMMENT =
  'Operator catalog written by `clipdesk-service catalog sync` (docs/providers.md, "Syncing the catalog"), merged over the built-in one. A sync replaces the offers of the providers it reads; edits to other entries are kept.';

export function buildOperatorDocument(input: BuildInput): {
  document: OperatorDocument;
  counts: Record<SyncedProvider, BuildCounts>;
} {
  const builtinIds = new Map(input.builtin.models.map((m) => [m.id, m]));
  const synced = new Set(input.read.map((r) => r.provider));
  const models: ModelEntry[] = [];
  for (const entry of input.previous?.models ?? []) {
    const offers = (entry.offers ?? []).filter((o) => !synced.has(o.provider as SyncedProvider));
    const kept: ModelEntry = { ...structuredClone(entry), offers };
    const onlyOffers = Object.keys(kept).every((k) => k === 'id' || k === 'offers');
    if (offers.length === 0 && (!builtinIds.has(entry.id) || onlyOffers)) continue;
    models.push(kept);
  }
  const counts = {} as Record<SyncedProvider, BuildCounts>;
  for (const { provider, listing } of input.read) {
    const count: BuildCounts = { unpriced: 0, unfit: 0, absurd: 0, unpricedModels: [] };
    counts[provider] = count;
    for (const [id, listed] of groupByModel(input.map, listing.models)) {
      const outcome = place(input, builtinIds, models, id, listed, (entry) => count.unpricedModels.push(entry));
      if (outcome !== 'ok') count[outcome] += 1;
    }
  }
  return { document: { $comment: COMMENT, version: 1, models }, counts };
}

function groupByModel(map: ProviderModelMap, listed: ListedModel[]): Map<string, ListedModel[]> {
  const groups = new Map<string, ListedModel[]>();
  for (const model of listed) {
    const id = catalogIdFor(map, model);
    if (!id) continue;
    groups.set(id, [...(groups.get(id) ?? []), model]);
  }
  return groups;
}

/** One provider's offer for one model, from its listed endpoints (fal: one per task). */
interface SyncedOffer {
  provider: SyncedProvider;
  media: 'video' | 'image';
  offer: CatalogOffer | undefined;
  reading: SchemaReading;
  name: string;
  description: string;
  /** The endpoint whose listed price the offer carries, and the unit it was listed in. */
  listedAs?: { endpoint: string; unit: string };
  /** An endpoint whose listed unit the catalog cannot read, and that unit. */
  unmapped?: { endpoint: string; unit: string };
}

function place(
  input: BuildInput,
  builtinIds: Map<string, CatalogFile['models'][number]>,
  models: ModelEntry[],
  id: string,
  listed: ListedModel[],
  report: (entry: UnpricedModel) => void,
): 'ok' | 'unpriced' | 'unfit' | 'absurd' {
  const builtin = builtinIds.get(id);
  const synced = syncedOffer(input, listed, builtin);
  const provider = synced.provider;
  // Checked before anything is placed: a built-in offer's price is never patched to an absurd one.
  if (synced.offer && absurdPrice(synced.offer, synced.media)) return 'absurd';
  const unpriced = (kept: UnpricedModel['kept'], at = synced.unmapped ?? synced.listedAs): void =>
    report({ model: id, endpoint: at?.endpoint ?? (listed[0] as ListedModel).id, unit: at?.unit ?? null, kept });
  if (builtin) {
    const existing = builtin.offers.find((o) => o.provider === provider);
    // A built-in offer keeps its path and rules; a price read from the API replaces its figure only
    // where one figure can say what the built-in rule says (never a table flattened to one number).
    if (existing) {
      const read = synced.offer && !synced.offer.unverified ? synced.offer : undefined;
      const patch = read ? builtinPricePatch(existing, read) : undefined;
      if (patch) patchEntry(models, id).push(patch);
      else if (read || synced.unmapped) unpriced('builtin', read ? synced.listedAs : synced.unmapped);
      return 'ok';
    }
    if (!synced.offer) {
      unpriced('none');
      return 'unpriced';
    }
    const fitted = fitToModel(synced.offer, builtin);
    if (!fitted) return 'unfit';
    patchEntry(models, id).push(fitted);
    return 'ok';
  }
  if (!synced.offer) {
    unpriced('none');
    return 'unpriced';
  }
  const index = models.findIndex((m) => m.id === id);
  const candidate =
    index === -1 ? newModel(id, synced, synced.offer) : joinModel(models[index] as ModelEntry, synced, synced.offer);
  const checked = CatalogModel.safeParse(candidate);
  if (!checked.success) return 'unfit';
  if (index === -1) models.push(checked.data);
  else models[index] = checked.data;
  return 'ok';
}

function syncedOffer(
  input: BuildInput,
  listed: ListedModel[],
  builtin: CatalogFile['models'][number] | undefined,
): SyncedOffer {
  const first = listed[0] as ListedModel;
  const provider = first.provider;
  const media = listed.some((l) => l.task === 'text_to_image') ? 'image' : 'video';
  const defaultDuration = builtin?.parameters.duration?.default;
  const sameMedia = listed.filter((l) => (l.task === 'text_to_image') === (media === 'image'));
  // An endpoint whose price fal does not publish is not offered: its task would be charged a guess.
  const pricedByApi = sameMedia.filter((l) => l.price);
  const usable = provider === 'fal' && pricedByApi.length > 0 ? pricedByApi : sameMedia;
  const readings = usable.map((l) => readInputSchema(l));
  const reading = mergeReadings(readings);
  const path = offerPath(usable, readings);
  const defaults = {
    duration: defaultDuration ?? (reading.parameters['duration'] as { default?: number } | undefined)?.default,
    width: 1024,
    height: 1024,
  };
  const mapped = mappingFor(input.map, provider, first.id);
  const name = mapped?.name ?? displayName(first.name);
  const description = first.description || `${name}, as ${provider} lists it.`;
  let priced:
    Pick<CatalogOffer, 'price' | 'prices' | 'priceAsOf' | 'priceSource' | 'unverified' | 'durations'> | undefined;
  let listedAs: SyncedOffer['listedAs'];
  let unmapped: SyncedOffer['unmapped'];
  // The dearest of its endpoints' prices: a model's offer never charges below what any task costs.
  for (const l of usable) {
    const price = l.price ? catalogPrice(l.price, media, defaults) : undefined;
    if (price && isUnmapped(price)) {
      unmapped ??= { endpoint: l.id, unit: price.unpricedUnit };
      continue;
    }
    if (price && (!priced || price.price > priced.price)) {
      priced = {
        price: price.price,
        prices: price.prices,
        priceAsOf: input.day,
        priceSource: falPriceSource(input.falPlatformUrl, l.id),
        ...(price.durations ? { durations: price.durations } : {}),
      };
      listedAs = { endpoint: l.id, unit: l.price!.unit };
    }
  }
  // An endpoint priced in a unit the catalog cannot read is not offered at a guess: with another
  // endpoint's price the offer would charge that task below what it costs.
  if (unmapped) priced = undefined;
  const hand = usable.map((l) => mappingFor(input.map, provider, l.id)?.price).find(Boolean);
  if (!priced && hand) priced = { ...hand };
  const features = reading.features.filter(
    (f) => (f !== 'text_to_video' && f !== 'image_to_video') || (typeof path !== 'string' ? path[f] : true),
  );
  const offer: CatalogOffer | undefined = priced
    ? {
        provider,
        path,
        ...priced,
        features,
        sizes: reading.sizes,
        ...((priced.durations ?? reading.durations) ? { durations: priced.durations ?? reading.durations } : {}),
        parameters: reading.own,
        inputs: reading.inputs,
        inputSchemas: Object.fromEntries(usable.map((l) => [l.id, listedSchema(l)])),
      }
    : undefined;
  return {
    provider,
    media,
    offer,
    reading,
    name,
    description,
    ...(listedAs ? { listedAs } : {}),
    ...(unmapped ? { unmapped } : {}),
  };
}

/**
 * A listed model's input schema as kept with the synced offer (docs/providers.md, "Request
 * schemas"): its properties with references resolved, and what it requires.
 */
function listedSchema(listed: ListedModel): Record<string, unknown> {
  return { type: 'object', properties: listed.input.properties, required: listed.input.required };
}

/** fal: a path per task; Replicate: the one model for every task. */
function offerPath(listed: ListedModel[], readings: SchemaReading[]): CatalogOffer['path'] {
  if (listed[0]?.provider === 'replicate') return listed[0].id;
  const path: Partial<Record<SyncTask, string>> = {};
  listed.forEach((l, i) => {
    path[l.task] ??= l.id;
    if (l.task === 'text_to_video' && readings[i]?.features.includes('image_to_video')) path.image_to_video ??= l.id;
  });
  return path;
}

function mergeReadings(readings: SchemaReading[]): SchemaReading {
  // The image-to-video endpoint names the start frame; its reading comes first for inputs.
  const ordered = [...readings].sort((a, b) => Number(!!b.inputs.image_url) - Number(!!a.inputs.image_url));
  const base = structuredClone(ordered[0] as SchemaReading);
  for (const other of ordered.slice(1)) {
    base.features = [...new Set([...base.features, ...other.features])];
    base.sizes = [...new Set([...base.sizes, ...other.sizes])];
    if (base.durations && other.durations)
      base.durations = [...new Set([...base.durations, ...other.durations])].sort((a, b) => a - b);
    for (const name of other.own) if (!base.own.includes(name)) base.own.push(name);
    base.parameters = mergeParameters(base.parameters, other.parameters);
    base.inputs = { ...other.inputs, ...base.inputs };
  }
  return base;
}

/** The union of two models' parameter rules: sizes and durations widened, other rules as first met. */
function mergeParameters(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...b, ...a };
  const sizeA = a['size'] as { values?: string[] } | undefined;
  const sizeB = b['size'] as { values?: string[] } | undefined;
  if (sizeA?.values && sizeB?.values)
    out['size'] = { ...sizeA, values: [...new Set([...sizeA.values, ...sizeB.values])] };
  const dA = a['duration'] as { min: number; max: number; default: number; values?: number[] } | undefined;
  const dB = b['duration'] as typeof dA;
  if (dA && dB) {
    const values =
      dA.values && dB.values ? [...new Set([...dA.values, ...dB.values])].sort((x, y) => x - y) : undefined;
    out['duration'] = {
      min: Math.min(dA.min, dB.min),
      max: Math.max(dA.max, dB.max),
      default: dA.default,
      ...(values ? { values } : {}),
    };
  }
  return out;
}

function displayName(name: string): string {
  return name.replace(/\s*[|:-]?\s*\(?(text|image)[ -]to[ -](video|image)\)?\s*$/i, '').trim() || name;
}

function patchEntry(models: ModelEntry[], id: string): OfferEntry[] {
  let entry = models.find((m) => m.id === id);
  if (!entry) {
    entry = { id, offers: [] };
    models.push(entry);
  }
  entry.offers ??= [];
  return entry.offers;
}

/** A new provider's offer for a built-in model, within the model's own rules; undefined when nothing fits. */
function fitToModel(offer: CatalogOffer, model: CatalogFile['models'][number]): CatalogOffer | undefined {
  const sizes =
    model.media === 'video'
      ? offer.sizes.filter((s) => model.parameters.size?.values.includes(s) ?? true)
      : offer.sizes;
  const rule = model.parameters.duration;
  const durations = offer.durations?.filter((d) => !rule || (d >= rule.min && d <= rule.max));
  if (sizes.length === 0 || (durations && durations.length === 0)) return undefined;
  const own = ownParameters(model.parameters);
  return {
    ...offer,
    sizes,
    ...(durations ? { durations } : {}),
    parameters: (offer.parameters ?? []).filter((p) => own.includes(p)),
  };
}

function newModel(id: string, synced: SyncedOffer, offer: CatalogOffer): ModelEntry {
  return {
    id,
    name: synced.name,
    description: synced.description,
    media: synced.media,
    parameters: synced.reading.parameters,
    offers: [offer],
  };
}

/** Another provider's offer for a model already synced (or kept from the last sync). */
function joinModel(entry: ModelEntry, synced: SyncedOffer, offer: CatalogOffer): ModelEntry {
  const parameters = mergeParameters(entry.parameters ?? {}, synced.reading.parameters);
  if (synced.media === 'image') parameters['size'] = entry.parameters?.['size'] ?? { ...IMAGE_SIZE_RULE };
  return {
    ...entry,
    parameters,
    offers: [...(entry.offers ?? []).filter((o) => o.provider !== offer.provider), offer],
  };
}
