import { findOffer, offerSupportsSize, PROVIDERS, videoSizeDimensions } from './model-definitions.ts';
import type { ModelDefinition, ProviderDefinition } from './model-definitions.ts';
import { RenderError } from './errors.ts';
import { renderJob } from './render.ts';
import type { Binaries } from './render.ts';
import type { LocalProvider, RenderJob, RenderOutput } from './types.ts';
import type { ModelProviderOffer, ModelRecord, ProviderRecord } from '../../shared/api/index.ts';

export * from './model-definitions.ts';
export * from './errors.ts';
export type * from './types.ts';

export interface LocalProvidersOptions extends Binaries {
  /** Slugs or ids of providers that fail every request (`serve --fail-provider`), for fallback drills. */
  failProviders?: string[];
}

/**
 * The Local engine's providers: procedural renderers built on ffmpeg (not AI). Each renders the
 * models it offers, at the sizes and with the features of its offers, into `job.workDir`.
 */
export function createLocalProviders(opts: LocalProvidersOptions = {}): LocalProvider[] {
  const failing = new Set((opts.failProviders ?? []).map((s) => s.trim().toLowerCase()));
  const bins: Binaries = { ffmpegPath: opts.ffmpegPath, ffprobePath: opts.ffprobePath };
  return PROVIDERS.map((def) => createProvider(def, bins, failing.has(def.slug) || failing.has(def.id)));
}

function createProvider(def: ProviderDefinition, bins: Binaries, failEveryRequest: boolean): LocalProvider {
  return {
    id: def.id,
    slug: def.slug,
    name: def.name,
    description: def.description,
    offers: def.offers.map((o) => ({ ...o, features: [...o.features], sizes: [...o.sizes] })),
    async render(job: RenderJob): Promise<RenderOutput> {
      if (failEveryRequest) {
        throw new RenderError(
          'provider_failure',
          `provider ${def.slug} is set to fail every request (--fail-provider)`,
        );
      }
      checkJob(def, job);
      return renderJob(job, def.slug, def.quality, bins);
    },
  };
}

/** Defends the provider against jobs routing should never send it. */
function checkJob(def: ProviderDefinition, job: RenderJob): void {
  const offer = findOffer(def, job.model);
  if (!offer) throw new RenderError('unsupported', `provider ${def.slug} does not offer model ${job.model}`);
  const media = job.kind;
  const size = media === 'video' ? sizeLabelOf(job.width, job.height) : `${job.width}x${job.height}`;
  if (size === undefined || !offerSupportsSize(offer, media, size)) {
    throw new RenderError(
      'unsupported',
      `provider ${def.slug} does not render ${job.width}x${job.height} for ${offer.model}`,
    );
  }
  if (job.startImagePath !== undefined && media === 'video' && !offer.features.includes('image_to_video')) {
    throw new RenderError('unsupported', `provider ${def.slug} does not animate start images for ${offer.model}`);
  }
  if (job.style !== undefined && !offer.features.includes('style')) {
    throw new RenderError('unsupported', `provider ${def.slug} does not apply styles for ${offer.model}`);
  }
  if (media === 'video' && !(job.durationSeconds > 0)) {
    throw new RenderError('invalid_input', 'video duration must be positive');
  }
}

function sizeLabelOf(width: number, height: number): string | undefined {
  for (const label of ['360p', '480p', '720p', '1080p']) {
    const d = videoSizeDimensions(label);
    if (d && d.width === width && d.height === height) return label;
  }
  return undefined;
}

/** The wire record of a model (docs/api.md, "Model record"), with the offers of the given providers. */
export function toModelRecord(
  model: ModelDefinition,
  providers: readonly LocalProvider[],
  version?: string,
): ModelRecord {
  const chosen = version ?? model.versions.at(-1) ?? '';
  const offers: ModelProviderOffer[] = [];
  for (const p of providers) {
    const offer = findOffer(p, model.id);
    if (offer) {
      offers.push({
        id: p.id,
        slug: p.slug,
        price: offer.price,
        priceUnit: model.media === 'image' ? 'image' : 'second',
        ...(offer.prices ? { prices: offer.prices.map((p) => ({ ...p })) } : {}),
        features: [...offer.features],
        sizes: [...offer.sizes],
      });
    }
  }
  return {
    id: model.id,
    base: model.base,
    slug: model.slug,
    name: model.name,
    version: chosen,
    versions: [...model.versions],
    media: model.media,
    description: model.description,
    parameters: model.parameters,
    providers: offers,
  };
}

/** The wire record of a provider (docs/api.md, "Provider record"). */
export function toProviderRecord(provider: LocalProvider, available = true): ProviderRecord {
  const features = [...new Set(provider.offers.flatMap((o) => o.features))];
  return {
    id: provider.id,
    slug: provider.slug,
    name: provider.name,
    description: provider.description,
    status: available ? 'available' : 'unavailable',
    models: provider.offers.map((o) => o.model),
    features,
  };
}
