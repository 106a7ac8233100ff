import type { ChargeRequest, Feature, MediaKind, PricedOffer, RoutingMode } from '../../shared/api/index.ts';
import { chargeFor } from '../../shared/api/index.ts';
import type { Provider, ProviderOffer } from '../providers/types.ts';
import { ApiError } from '../errors.ts';
import { offerPath } from '../providers/model-definitions.ts';
import { acceptedAspectRatios } from '../providers/remote/input-schemas.ts';

/**
 * Routing (docs/api.md, "Routing"). Candidates are the providers routing may use now (local ones,
 * and remote ones that are configured, enabled and not cooling down). Basic requirements: the
 * provider serves the model, renders the size and, where it has fixed durations, the duration, and
 * it can take the request's kind of input (an image-to-video-only offer needs a start image; a
 * start image needs a provider that can receive one privately). Features: the capabilities the
 * request uses, and the model's own parameters it gives. The result is a ranking: the first is
 * tried, and on failure the next in the same ranking (fallback).
 */
export interface RouteRequest {
  media: MediaKind;
  /** `base/slug`, no version. */
  model: string;
  size: string;
  /** Seconds of video (absent for images). */
  durationSeconds?: number;
  /** The frame shape the creator chose (the model's `aspect_ratio`), sent only where it is taken. */
  aspectRatio?: string;
  /** The features the request uses (the kind's base feature first). */
  features: Feature[];
  /**
   * The model's own parameters the request gives (names; the ones that ask for a feature, such
   * as `audio`, are covered by `features`). An offer honours those in its `parameters`.
   */
  parameters?: string[];
  mode: RoutingMode;
  /** An explicit provider id or slug: routing is bypassed. */
  provider?: string;
  /**
   * Request fields that are neither interface fields nor parameters of the model. No provider
   * can honour them: `compatible` and an explicit provider refuse them, the other modes drop
   * them and say so in `stats.ignoredParameters`, so nothing is dropped silently.
   */
  unknownParameters?: string[];
  /**
   * What of the request its price depends on (size, seconds, items, sound): routing orders
   * offers by what this request costs on each (docs/providers.md, "Prices"). Absent: by the
   * offers' headline prices.
   */
  charge?: ChargeRequest;
}

/** What the request costs on an offer: its charge (shared/api/pricing.ts), else the headline price. */
export function requestCost(req: Pick<RouteRequest, 'charge'>, offer: PricedOffer): number {
  return req.charge ? chargeFor(offer, req.charge).usd : offer.price;
}

export interface RouteCandidate {
  provider: Provider;
  offer: ProviderOffer;
  /** Request parameters this provider cannot honour and will not receive (not under compatible). */
  ignoredParameters: string[];
}

export interface RoutingContext {
  providers: readonly Provider[];
  offerSupportsSize: (offer: ProviderOffer, media: MediaKind, size: string) => boolean;
  /**
   * Why routing may not use a provider now (remote: no key, switched off, cooling down after
   * failures), or undefined when it may. Absent: every provider may be used.
   */
  unavailableReason?: (provider: Provider) => string | undefined;
}

/** Which request parameter asks for which optional feature; the base feature is not optional. */
const FEATURE_PARAMETER: Partial<Record<Feature, string>> = {
  image_to_video: 'image_url',
  style: 'style',
  seed: 'seed',
  audio: 'audio',
};

/** Model parameters that stand for a feature: routing weighs them as that feature. */
export const FEATURE_PARAMETERS: readonly string[] = Object.values(FEATURE_PARAMETER);

/** A provider may cost this much more under `optimal` when it supports strictly more features. */
export const OPTIMAL_ALLOWANCE = 1.2;

type Offered = { provider: Provider; offer: ProviderOffer };

export function routeRequest(ctx: RoutingContext, req: RouteRequest): RouteCandidate[] {
  const offers = ctx.providers.flatMap((provider) => {
    const offer = provider.offers.find((o) => o.model === req.model);
    return offer ? [{ provider, offer }] : [];
  });
  const unknown = req.unknownParameters ?? [];
  if (req.provider !== undefined) return explicitProvider(ctx, req, offers, unknown);

  const usable = offers.filter((c) => ctx.unavailableReason?.(c.provider) === undefined);
  if (usable.length === 0 && offers.length > 0) {
    const names = offers.map((c) => `${c.provider.slug} (${ctx.unavailableReason?.(c.provider) ?? 'unavailable'})`);
    throw new ApiError(
      'provider_unavailable',
      `no provider that offers ${req.model} can be used now: ${names.join(', ')}. ` +
        // Every way named here works as written, wherever the service runs: the variables and
        // `clipdesk providers set-key` in test/integration/cli/keys-without-keychain.test.ts,
        // `clipdesk-service providers set-key` in test/integration/server/providers-cli.test.ts.
        "Add a provider key: set the provider's variable (FAL_KEY, …) where the service runs, or store one " +
        '(in the app: Settings → Providers or clipdesk providers set-key NAME; ' +
        'for a standalone service: clipdesk-service providers set-key NAME)',
    );
  }
  const byPrice = byPriceOf(req);
  const basic = usable.filter((c) => basicProblem(ctx, req, c) === undefined).sort(byPrice);
  if (basic.length === 0) {
    const problems = [...new Set(usable.map((c) => basicProblem(ctx, req, c)))].filter(Boolean);
    throw new ApiError(
      'unsupported_parameter',
      `no provider renders this request for ${req.model}${problems.length > 0 ? `: ${problems.join('; ')}` : ''}`,
    );
  }
  const full = basic.filter((c) => missing(req, c.offer).length === 0);

  if (req.mode === 'cheapest' || (req.mode === 'optimal' && full.length === 0)) {
    // Optimal falls back to cheapest's rule when no provider supports everything, so the default
    // mode still renders something, listing what it had to drop.
    return basic.map((c) => ({ ...c, ignoredParameters: [...missing(req, c.offer), ...unknown] }));
  }
  if (req.mode === 'compatible' && unknown.length > 0) throw unknownParametersError(req.model, unknown);
  if (full.length === 0) {
    const dropped = new Set(basic.flatMap((c) => missing(req, c.offer)));
    throw new ApiError(
      'unsupported_parameter',
      `no provider of ${req.model} supports every parameter of this request (${[...dropped].join(', ')}); ` +
        "use routing 'cheapest' to drop what cannot be honoured",
    );
  }
  if (req.mode === 'compatible') return full.map((c) => ({ ...c, ignoredParameters: [] }));

  // optimal: the cheapest full match, unless one with strictly more features costs at most 20 % more.
  const cheapest = full[0] as Offered;
  const upgrades = full
    .filter(
      (c) =>
        c.offer.features.length > cheapest.offer.features.length &&
        requestCost(req, c.offer) <= requestCost(req, cheapest.offer) * OPTIMAL_ALLOWANCE + 1e-12,
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
  offers: Offered[],
  unknown: string[],
): RouteCandidate[] {
  const wanted = (req.provider ?? '').trim().toLowerCase();
  const provider = ctx.providers.find((p) => p.id === wanted || p.slug === wanted);
  if (!provider) throw new ApiError('not_found_error', `unknown provider '${req.provider ?? ''}'`);
  const match = offers.find((c) => c.provider === provider);
  if (!match) throw new ApiError('unsupported_parameter', `provider '${provider.slug}' does not serve ${req.model}`);
  const reason = ctx.unavailableReason?.(provider);
  if (reason !== undefined)
    throw new ApiError(
      'provider_unavailable',
      `provider '${provider.slug}' cannot be used now (${reason}); name another or omit provider to let routing choose`,
    );
  const problem = basicProblem(ctx, req, match);
  if (problem !== undefined)
    throw new ApiError('unsupported_parameter', `provider '${provider.slug}' cannot render this request: ${problem}`);
  const cannot = [...missing(req, match.offer), ...unknown];
  if (cannot.length > 0) {
    throw new ApiError('unsupported_parameter', `provider '${provider.slug}' cannot honour: ${cannot.join(', ')}`);
  }
  return [{ ...match, ignoredParameters: [] }];
}

/** Why an offer fails the basic requirements, or undefined when it meets them. */
function basicProblem(ctx: RoutingContext, req: RouteRequest, { provider, offer }: Offered): string | undefined {
  if (!ctx.offerSupportsSize(offer, req.media, req.size)) return `sizes ${offer.sizes.join(', ')} (not ${req.size})`;
  const duration = req.durationSeconds;
  if (req.media === 'video' && duration !== undefined && offer.durations && !offer.durations.includes(duration))
    return `${provider.slug} renders ${offer.durations.join(' or ')} seconds (not ${duration})`;
  const withImage = req.media === 'video' && req.features.includes('image_to_video');
  if (withImage && provider.kind === 'remote' && provider.adapter.startImage === 'none')
    return `${provider.slug} cannot receive a start image from this service (its API only fetches public URLs)`;
  const ratios = req.aspectRatio === undefined ? undefined : offerAspectRatios(provider, offer, withImage);
  if (ratios && req.aspectRatio !== undefined && !ratios.includes(req.aspectRatio))
    return `${provider.slug} renders aspect ratios ${ratios.join(', ')} (not ${req.aspectRatio})`;
  if (req.media === 'image') return offer.features.includes('text_to_image') ? undefined : 'no text-to-image';
  if (offer.features.includes('text_to_video')) return undefined;
  // Image-to-video only (Runway Gen-4 Turbo, Replicate's Kling 2.1): a start image is required.
  if (offer.features.includes('image_to_video'))
    return withImage ? undefined : `${provider.slug} animates a start image only (give image_url)`;
  return 'no text-to-video';
}

/** The aspect ratios a remote offer's model takes for the request's task (its input schema). */
function offerAspectRatios(provider: Provider, offer: ProviderOffer, withImage: boolean): string[] | undefined {
  if (provider.kind !== 'remote') return undefined;
  const task = withImage
    ? 'image_to_video'
    : offer.features.includes('text_to_image')
      ? 'text_to_image'
      : 'text_to_video';
  const path = offerPath(offer, task) ?? offer.model;
  return acceptedAspectRatios(provider.id, path, offer.inputs?.aspect_ratio?.values);
}

/**
 * What an offer cannot honour, as request parameter names: optional features it lacks and model
 * parameters it does not take. 'hd' is left out: whether it renders the size is already a basic
 * requirement.
 */
function missing(req: RouteRequest, offer: ProviderOffer): string[] {
  const features = req.features.slice(1).filter((f) => f !== 'hd' && !offer.features.includes(f));
  const parameters = (req.parameters ?? []).filter(
    (p) => !FEATURE_PARAMETERS.includes(p) && !(offer.parameters ?? []).includes(p),
  );
  return [...new Set([...features.map((f) => FEATURE_PARAMETER[f] ?? f), ...parameters])];
}

/** Cheapest for this request first; then more features; then by id, so the order is stable. */
function byPriceOf(req: RouteRequest): (a: Offered, b: Offered) => number {
  return (a, b) =>
    requestCost(req, a.offer) - requestCost(req, b.offer) ||
    b.offer.features.length - a.offer.features.length ||
    a.provider.id.localeCompare(b.provider.id);
}
