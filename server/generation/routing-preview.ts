import type { MediaKind, PriceEntry, RoutingMode, RoutingPreview, RoutingPreviewRow } from '../../shared/api/index.ts';
import { ROUTING_MODES } from '../../shared/api/index.ts';
import { ApiError } from '../errors.ts';
import type { Provider } from '../providers/types.ts';
import { explainChoice } from '../routing/explain.ts';
import type { RouteCandidate } from '../routing/route.ts';
import { requestCost } from '../routing/route.ts';
import { round } from './finish.ts';
import type { Draft, RoutingNow } from './plan.ts';
import { chargeOf, draftImage, draftVideo, routePlan, routeRequestOf, usableCandidates } from './plan.ts';

/**
 * `POST /routing/preview` (docs/api.md, "Routing preview"): what a generation body would get under each routing mode,
 * computed by the code the generation runs (the same draft, routePlan, cooldown filter and unit
 * price), so the row of the body's own mode names the provider and price its submit gets.
 *
 * Nothing is fetched: routing only needs to know that a start image is given (image_url makes
 * the request image-to-video), never what it is. The start image is resolved (and refused, if it
 * is bad) only by the submit.
 */
export function previewRouting(ctx: RoutingNow, raw: unknown): RoutingPreview {
  // The model decides which endpoint the body belongs to; an unknown model gets the video
  // route's answer (404, or 400 for a body without one), as the app would send it there.
  const draft = mediaOf(ctx, raw) === 'image' ? draftImage(ctx, raw) : draftVideo(ctx, raw);
  const outcomes = new Map(ROUTING_MODES.map((mode) => [mode, outcome(ctx, draft, mode)]));
  const compatible = outcomes.get('compatible');
  const fullMatch = compatible && 'first' in compatible ? compatible.first : null;
  // What the request costs on an offer: its charge, whatever the mode.
  const asked = routeRequestOf(draft, draft.routing);
  const pinned = draft.provider !== undefined ? pinnedProvider(ctx, draft.provider) : null;
  return {
    model: `${draft.model}:${draft.version}`,
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
          unknown: draft.unknownParameters,
          cost: (c) => requestCost(asked, c.offer),
        }),
        error: null,
      } satisfies RoutingPreviewRow;
    }),
  };
}

type Outcome = { first: RouteCandidate; unitPrice: number; entry: PriceEntry | null } | { error: ApiError };

function outcome(ctx: RoutingNow, draft: Draft, mode: RoutingMode): Outcome {
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

function mediaOf(ctx: RoutingNow, raw: unknown): MediaKind {
  const model = typeof raw === 'object' && raw !== null ? (raw as { model?: unknown }).model : undefined;
  return typeof model === 'string' && ctx.catalog.findModel(model)?.model.media === 'image' ? 'image' : 'video';
}

function pinnedProvider(ctx: RoutingNow, named: string): RoutingPreview['pinned'] {
  const provider = ctx.catalog.findProvider(named);
  return provider ? providerOf(provider) : null;
}

function providerOf(p: Provider): { id: string; slug: string; name: string } {
  return { id: p.id, slug: p.slug, name: p.name };
}
