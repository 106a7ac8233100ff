import type { MediaKind, PriceEntry, RoutingMode, RoutingPreview, RoutingPreviewRow } from '../../shared/api/index.ts';
import { ROUTING_MODES } from '../../shared/api/index.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { round } from '../media/finish.ts';
import type { Draft } from '../media/generate.ts';
import { chargeOf, draftImage, draftVideo, routePlan, usableCandidates } from '../media/generate.ts';
import type { Provider } from '../providers/types.ts';
import type { RouteCandidate } from './route.ts';
import { OPTIMAL_ALLOWANCE, requestCost } from './route.ts';

/**
 * `POST /routing/preview` (docs/api.md, "Routing preview"): what a generation body would get under each routing mode,
 * computed by the code the generation runs (the same draft, routePlan, cooldown filter and unit
 * price), so the row of the body's own mode names the provider and price its submit gets.
 *
 * Nothing is fetched: routing only needs to know that a start image is given (image_url makes
 * the request image-to-video), never what it is. The start image is resolved (and refused, if it
 * is bad) only by the submit.
 */
export function previewRouting(ctx: ServiceContext, raw: unknown): RoutingPreview {
  // The model decides which endpoint the body belongs to; an unknown model gets the video
  // route's answer (404, or 400 for a body without one), as the app would send it there.
  const draft = mediaOf(ctx, raw) === 'image' ? draftImage(ctx, raw) : draftVideo(ctx, raw);
  const outcomes = new Map(ROUTING_MODES.map((mode) => [mode, outcome(ctx, draft, mode)]));
  const compatible = outcomes.get('compatible');
  const fullMatch = compatible && 'first' in compatible ? compatible.first : null;
  const pinned = draft.route.provider !== undefined ? pinnedProvider(ctx, draft.route.provider) : null;
  return {
    model: `${draft.model.id}:${draft.version}`,
    media: draft.kind,
    count: draft.count,
    routing: draft.routing,
    pinned,
    rows: ROUTING_MODES.map((mode) => {
      const o = outcomes.get(mode)!;
      if ('error' in o) {
        return {
          routing: mode,
          provider: null,
          unitPrice: null,
          price: null,
          priceEntry: null,
          dropped: [],
          reason: `cannot render this request: ${o.error.message}`,
          error: { type: o.error.code, message: o.error.message },
        };
      }
      return {
        routing: mode,
        provider: providerOf(o.first.provider),
        unitPrice: round(o.unitPrice, 6),
        // Rounded as the charge is (finish.ts), so the figures are equal, not merely close.
        price: round(o.unitPrice * draft.count, 6),
        priceEntry: o.entry,
        dropped: [...o.first.ignoredParameters],
        reason: explainChoice({
          mode,
          pinned: pinned !== null,
          first: o.first,
          fullMatch,
          unknown: draft.route.unknownParameters ?? [],
          cost: (c) => requestCost(draft.route, c.offer),
        }),
        error: null,
      } satisfies RoutingPreviewRow;
    }),
  };
}

type Outcome = { first: RouteCandidate; unitPrice: number; entry: PriceEntry | null } | { error: ApiError };

function outcome(ctx: ServiceContext, draft: Draft, mode: RoutingMode): Outcome {
  try {
    const plan = routePlan(ctx, draft, mode);
    // The run tries the first candidate not cooling down (runGeneration), so that is the one shown.
    const first = usableCandidates(ctx, plan)[0]!;
    const charge = chargeOf(plan, first);
    return { first, unitPrice: charge.unitUsd, entry: charge.entry };
  } catch (error) {
    if (error instanceof ApiError) return { error };
    throw error;
  }
}

function mediaOf(ctx: ServiceContext, raw: unknown): MediaKind {
  const model = typeof raw === 'object' && raw !== null ? (raw as { model?: unknown }).model : undefined;
  return typeof model === 'string' && ctx.catalog.findModel(model)?.model.media === 'image' ? 'image' : 'video';
}

function pinnedProvider(ctx: ServiceContext, named: string): RoutingPreview['pinned'] {
  const provider = ctx.catalog.findProvider(named);
  return provider ? providerOf(provider) : null;
}

function providerOf(p: Provider): { id: string; slug: string; name: string } {
  return { id: p.id, slug: p.slug, name: p.name };
}

/** What a dropped request parameter means to a creator. */
const PARAMETER_WORDS: Readonly<Record<string, string>> = {
  image_url: 'start frame',
  style: 'style',
  seed: 'seed',
  audio: 'sound',
};

/** A provider feature a creator would recognise, for "supports … too". */
const FEATURE_WORDS: Readonly<Record<string, string>> = {
  image_to_video: 'start frames',
  text_to_video: 'text-to-video',
  text_to_image: 'text-to-image',
  hd: 'HD',
  style: 'styles',
  seed: 'seeds',
  audio: 'sound',
};

function words(list: readonly string[], table: Readonly<Record<string, string>>): string {
  const named = list.map((p) => table[p] ?? p);
  return named.length <= 1 ? (named[0] ?? '') : `${named.slice(0, -1).join(', ')} and ${named.at(-1) ?? ''}`;
}

/**
 * Why a mode's first candidate is the one, in one line. `fullMatch` is compatible's first (the
 * cheapest provider that honours every parameter), or null when there is none.
 */
export function explainChoice(input: {
  mode: RoutingMode;
  pinned: boolean;
  first: RouteCandidate;
  fullMatch: RouteCandidate | null;
  /** Request fields that are not parameters of the model (no provider can honour them). */
  unknown: readonly string[];
  /** What the request costs on a candidate (default: its headline price). */
  cost?: (c: RouteCandidate) => number;
}): string {
  const { mode, first, fullMatch } = input;
  if (input.pinned) return `${first.provider.name} is named in the request: routing is bypassed`;
  const dropped = first.ignoredParameters;
  if (dropped.length > 0) {
    const known = dropped.filter((p) => !input.unknown.includes(p));
    const unknown = dropped.filter((p) => input.unknown.includes(p));
    const why = [
      known.length > 0
        ? mode === 'optimal'
          ? `no provider honours every parameter, and the cheapest takes no ${words(known, PARAMETER_WORDS)}`
          : `the cheapest provider takes no ${words(known, PARAMETER_WORDS)}`
        : '',
      unknown.length > 0 ? `${unknown.join(', ')}: not a parameter of this model` : '',
    ].filter(Boolean);
    return `drops ${dropped.join(', ')}: ${why.join('; ')}`;
  }
  if (mode === 'optimal' && fullMatch && fullMatch.provider.id !== first.provider.id) {
    const extra = first.offer.features.filter((f) => !fullMatch.offer.features.includes(f));
    const cost = input.cost ?? ((c: RouteCandidate) => c.offer.price);
    const more = Math.round((cost(first) / cost(fullMatch) - 1) * 100);
    return (
      `${first.provider.name}: supports ${words(extra, FEATURE_WORDS)} too, for ${more} % more than ` +
      `${fullMatch.provider.name} (optimal allows up to ${Math.round((OPTIMAL_ALLOWANCE - 1) * 100)} %)`
    );
  }
  return 'cheapest provider that honours every parameter';
}
