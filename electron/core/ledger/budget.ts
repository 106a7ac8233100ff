import type { ChargeRequest, ModelProviderOffer, ModelRecord } from '../../../shared/api/index.ts';
import { chargeFor, requestAudio } from '../../../shared/api/index.ts';
import type { GenerationInput, Job } from '../jobs/index.ts';
import { roundUsd, utcDay } from './ledger.ts';
import type { Ledger } from './ledger.ts';

/** A profile's spending caps in USD; null is no cap. */
export interface Budget {
  daily: number | null;
  monthly: number | null;
}

export interface BudgetHold {
  reason: 'budget';
  message: string;
  until: null;
}

/** Money as the renderer's formatPrice writes it, so the hold reads like the rest of the app. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(usd < 1 ? 3 : 2)}`;
}

// Whole millionths of a dollar: a job that brings the day exactly to its cap is not over it, and
// float sums (0.1 + 0.2) must not make it so.
const micros = (usd: number): number => Math.round(usd * 1e6);

/**
 * Whether a job of `price` would pass a cap, given what is spent today and this month (charges
 * plus jobs in flight). Reaching a cap exactly is allowed; any amount over it holds the job.
 * The daily cap is named first when both would be passed. Pure.
 */
export function budgetHold(
  price: number | null,
  spent: { today: number; month: number },
  budget: Budget,
): BudgetHold | null {
  if (price === null || price <= 0) return null;
  const check = (cap: number | null, already: number, which: string): BudgetHold | null => {
    if (cap === null) return null;
    const would = already + price;
    if (micros(would) <= micros(cap)) return null;
    return {
      reason: 'budget',
      message: `Over ${which} budget (${formatUsd(roundUsd(would))} of ${formatUsd(cap)})`,
      until: null,
    };
  };
  return check(budget.daily, spent.today, "today's") ?? check(budget.monthly, spent.month, "this month's");
}

/**
 * What a request would cost by the catalog (shared/api/pricing.ts, as the service charges it): the
 * pinned provider's offer, else the cheapest for this request. `localStartFrame`: the job has a
 * start frame the queue has not uploaded yet (its request names no image_url so far), priced as
 * image-to-video all the same, as the routing preview prices it through its stand-in.
 */
export function catalogEstimate(
  models: readonly ModelRecord[],
  kind: Job['kind'],
  request: GenerationInput,
  localStartFrame = false,
): number | null {
  const wanted = request.model.trim().toLowerCase();
  const bare = wanted.replace(/:[^/:]*$/, '');
  const model = models.find((m) => {
    const id = m.id.toLowerCase();
    return id === wanted || id === bare || `${m.base}/${m.slug}`.toLowerCase() === bare;
  });
  // A service without offers (docs/api.md "Extensions"): the price is known after generation.
  if (!model?.providers || model.providers.length === 0) return null;
  const charge = estimateRequest(model, kind, request, localStartFrame);
  const cost = (o: ModelProviderOffer) =>
    chargeFor(o, { ...charge, media: perImage(model, kind, o) ? 'image' : 'video' }).usd;
  const pinned = request.provider?.toLowerCase();
  const offer = pinned
    ? model.providers.find((o) => o.id.toLowerCase() === pinned || o.slug.toLowerCase() === pinned)
    : [...model.providers].sort((a, b) => cost(a) - cost(b))[0];
  if (!offer) return null;
  return roundUsd(cost(offer));
}

function perImage(model: ModelRecord, kind: Job['kind'], offer: ModelProviderOffer): boolean {
  return model.media === 'image' || offer.priceUnit === 'image' || kind === 'image';
}

/** What of the request its price depends on; what it leaves out, the model's defaults. */
function estimateRequest(
  model: ModelRecord,
  kind: Job['kind'],
  request: GenerationInput,
  localStartFrame: boolean,
): ChargeRequest {
  const field = (name: string): unknown => (request as unknown as Record<string, unknown>)[name];
  const n = typeof field('n') === 'number' && (field('n') as number) > 0 ? (field('n') as number) : 1;
  const duration = typeof field('duration') === 'number' ? (field('duration') as number) : undefined;
  const size = typeof field('size') === 'string' ? (field('size') as string) : model.parameters?.size?.default;
  return {
    media: kind,
    size,
    duration: duration ?? model.parameters?.duration?.default ?? 0,
    count: n,
    audio: requestAudio(field('audio'), model.parameters?.['audio'] as { default?: unknown } | undefined),
    startFrame: localStartFrame || typeof field('image_url') === 'string',
  };
}

export interface BudgetCheckOptions {
  ledger: Ledger;
  profileId: string;
  budget: () => Budget;
  /** The job's previewed price (`route.price`), else the catalog's estimate; null when unknown. */
  priceOf: (job: Job) => number | null;
  /** Jobs the creator chose to "Submit once anyway". */
  exempt: (jobId: string) => boolean;
  now: () => number;
}

/**
 * The queue's `holdFor` for budgets: spent = the ledger's charges for the profile today (this
 * month) + the prices of the jobs in flight, which have no charge yet. A job that already has
 * its result (a download to finish, a recovery) costs nothing more and is never held.
 */
export function budgetHoldFor(o: BudgetCheckOptions): (job: Job, inFlight: readonly Job[]) => BudgetHold | null {
  return (job, inFlight) => {
    const budget = o.budget();
    if ((budget.daily === null && budget.monthly === null) || job.result || o.exempt(job.id)) return null;
    const today = utcDay(o.now());
    const flying = inFlight.reduce((n, j) => (j.result ? n : n + (o.priceOf(j) ?? 0)), 0);
    return budgetHold(
      o.priceOf(job),
      {
        today: o.ledger.spent(o.profileId, today, today) + flying,
        month: o.ledger.spent(o.profileId, `${today.slice(0, 7)}-01`, today) + flying,
      },
      budget,
    );
  };
}
