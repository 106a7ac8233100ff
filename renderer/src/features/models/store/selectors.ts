import type { ModelProviderOffer, ModelRecord } from '../../../../../shared/api/catalog.ts';
import type { MediaKind } from '../../../../../shared/api/media.ts';
import type { ModelsState } from './initialState.ts';

/** Capabilities a model offers: the union of its providers' features. */
export function modelCapabilities(model: ModelRecord): string[] {
  const set = new Set<string>();
  for (const offer of model.providers) for (const f of offer.features) set.add(f);
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
    if (q && !`${m.name} ${m.base}/${m.slug} ${m.description}`.toLowerCase().includes(q)) return false;
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
  for (const o of model.providers) if (!best || o.price < best.price) best = o;
  return best;
}

export function priceUnit(model: ModelRecord, offer?: ModelProviderOffer): 'second' | 'image' {
  return offer?.priceUnit ?? (model.media === 'image' ? 'image' : 'second');
}

/** The lowest and highest price per unit among the model's providers. */
export function priceRange(model: ModelRecord): { min: number; max: number } | null {
  if (model.providers.length === 0) return null;
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
};

export function capabilityLabel(c: string): string {
  return CAPABILITY_LABELS[c] ?? c.replaceAll('_', ' ');
}
