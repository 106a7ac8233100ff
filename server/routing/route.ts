import type { Feature, MediaKind, RoutingMode } from '../../shared/api/index.ts';
import type { LocalProvider, ProviderOffer } from '../providers/types.ts';
import { ApiError } from '../errors.ts';

/**
 * Routing (DESIGN.md "Routing"). Basic requirements: the provider serves the model and renders
 * the size (the duration range is the model's and is checked before routing). Features: the
 * capabilities the request uses. The result is a ranking: the first is tried, and on failure the
 * next in the same ranking (fallback).
 */
export interface RouteRequest {
  media: MediaKind;
  /** `base/slug`, no version. */
  model: string;
  size: string;
  /** The features the request uses (the kind's base feature first). */
  features: Feature[];
  mode: RoutingMode;
  /** An explicit provider id or slug: routing is bypassed. */
  provider?: string;
  /**
   * Request fields that are neither interface fields nor parameters of the model. No provider
   * can honour them: `compatible` and an explicit provider refuse them, the other modes drop
   * them and say so in `stats.ignoredParameters`, so nothing is dropped silently.
   */
  unknownParameters?: string[];
}

export interface RouteCandidate {
  provider: LocalProvider;
  offer: ProviderOffer;
  /** Request parameters this provider cannot honour and will not receive (not under compatible). */
  ignoredParameters: string[];
}

export interface RoutingContext {
  providers: readonly LocalProvider[];
  offerSupportsSize: (offer: ProviderOffer, media: MediaKind, size: string) => boolean;
}

/** Which request parameter asks for which optional feature; the base feature is not optional. */
const FEATURE_PARAMETER: Partial<Record<Feature, string>> = {
  image_to_video: 'image_url',
  style: 'style',
  seed: 'seed',
};

/** A provider may cost this much more under `optimal` when it supports strictly more features. */
export const OPTIMAL_ALLOWANCE = 1.2;

export function routeRequest(ctx: RoutingContext, req: RouteRequest): RouteCandidate[] {
  const offers = ctx.providers.flatMap((provider) => {
    const offer = provider.offers.find((o) => o.model === req.model);
    return offer ? [{ provider, offer }] : [];
  });
  const unknown = req.unknownParameters ?? [];
  if (req.provider !== undefined) return explicitProvider(ctx, req, offers, unknown);

  const basic = offers.filter((c) => meetsBasics(ctx, req, c.offer)).sort(byPrice);
  if (basic.length === 0) {
    throw new ApiError('unsupported_parameter', `no provider renders ${req.model} at size ${req.size}`);
  }
  const full = basic.filter((c) => missingFeatures(req, c.offer).length === 0);

  if (req.mode === 'cheapest' || (req.mode === 'optimal' && full.length === 0)) {
    // Optimal falls back to cheapest's rule when no provider supports everything, so the default
    // mode still renders something, listing what it had to drop.
    return basic.map((c) => ({
      ...c,
      ignoredParameters: [...parametersFor(missingFeatures(req, c.offer)), ...unknown],
    }));
  }
  if (req.mode === 'compatible' && unknown.length > 0) throw unknownParametersError(req.model, unknown);
  if (full.length === 0) {
    const missing = new Set(basic.flatMap((c) => parametersFor(missingFeatures(req, c.offer))));
    throw new ApiError(
      'unsupported_parameter',
      `no provider of ${req.model} supports every parameter of this request (${[...missing].join(', ')}); ` +
        "use routing 'cheapest' to drop what cannot be honoured",
    );
  }
  if (req.mode === 'compatible') return full.map((c) => ({ ...c, ignoredParameters: [] }));

  // optimal: the cheapest full match, unless one with strictly more features costs at most 20 % more.
  const cheapest = full[0] as (typeof full)[number];
  const upgrades = full
    .filter(
      (c) =>
        c.offer.features.length > cheapest.offer.features.length &&
        c.offer.price <= cheapest.offer.price * OPTIMAL_ALLOWANCE + 1e-12,
    )
    .sort((a, b) => b.offer.features.length - a.offer.features.length || byPrice(a, b));
  const first = upgrades[0] ?? cheapest;
  return [first, ...full.filter((c) => c !== first)].map((c) => ({ ...c, ignoredParameters: [...unknown] }));
}

function unknownParametersError(model: string, unknown: string[]): ApiError {
  return new ApiError(
    'unsupported_parameter',
    `${unknown.join(', ')}: not ${unknown.length === 1 ? 'a parameter' : 'parameters'} of ${model}, so no provider can honour ${unknown.length === 1 ? 'it' : 'them'}; ` +
      "use routing 'optimal' or 'cheapest' to drop what cannot be honoured",
  );
}

function explicitProvider(
  ctx: RoutingContext,
  req: RouteRequest,
  offers: Array<{ provider: LocalProvider; offer: ProviderOffer }>,
  unknown: string[],
): RouteCandidate[] {
  const wanted = (req.provider ?? '').trim().toLowerCase();
  const provider = ctx.providers.find((p) => p.id === wanted || p.slug === wanted);
  if (!provider) throw new ApiError('not_found_error', `unknown provider '${req.provider ?? ''}'`);
  const match = offers.find((c) => c.provider === provider);
  if (!match) throw new ApiError('unsupported_parameter', `provider '${provider.slug}' does not serve ${req.model}`);
  if (!meetsBasics(ctx, req, match.offer)) {
    throw new ApiError(
      'unsupported_parameter',
      `provider '${provider.slug}' cannot render ${req.model} at size ${req.size}`,
    );
  }
  const missing = [...parametersFor(missingFeatures(req, match.offer)), ...unknown];
  if (missing.length > 0) {
    throw new ApiError('unsupported_parameter', `provider '${provider.slug}' cannot honour: ${missing.join(', ')}`);
  }
  return [{ ...match, ignoredParameters: [] }];
}

function meetsBasics(ctx: RoutingContext, req: RouteRequest, offer: ProviderOffer): boolean {
  return ctx.offerSupportsSize(offer, req.media, req.size) && offer.features.includes(req.features[0] as Feature);
}

/** 'hd' is left out: whether a provider renders the size is already a basic requirement. */
function missingFeatures(req: RouteRequest, offer: ProviderOffer): Feature[] {
  return req.features.filter((f) => f !== 'hd' && !offer.features.includes(f));
}

function parametersFor(features: Feature[]): string[] {
  return [...new Set(features.map((f) => FEATURE_PARAMETER[f] ?? f))];
}

function byPrice(
  a: { provider: LocalProvider; offer: ProviderOffer },
  b: { provider: LocalProvider; offer: ProviderOffer },
): number {
  return (
    a.offer.price - b.offer.price ||
    b.offer.features.length - a.offer.features.length ||
    a.provider.id.localeCompare(b.provider.id)
  );
}
