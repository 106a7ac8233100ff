import type { GenerationPlan } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { GenerationServices } from './services.ts';
import { ApiError } from '../errors.ts';
import { storedPlan } from '../storage/generations.ts';
import type { GenerationOperation, GenerationRow } from '../storage/generations.ts';
import { planImage, planVideo } from './plan.ts';
import type { RoutingNow } from './plan.ts';
import { planVariation } from './variations.ts';

/** What planning a request reads: routing now, and for a variation its source item and the service's origin. */
export type Planning = RoutingNow & Pick<GenerationServices, 'db' | 'origin'>;

/** Plans an operation's request (validation, model, routing): at request time and again on resume. */
export async function planFor(
  ctx: Planning,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
): Promise<GenerationPlan> {
  // Routing skips providers in a cooldown: as the nodes' shared table has it (health.ts).
  await ctx.providerHealth.refresh();
  if (operation === 'videos.generations') return planVideo(ctx, raw);
  if (operation === 'images.generations') return planImage(ctx, raw);
  return await planVariation(ctx, auth, raw);
}

/**
 * The plan a stored generation runs after a restart or on the node that took it over: the one made
 * when its request came in, never the raw body planned again (its candidates are read against the
 * catalog as it is now when it runs: usableCandidates). A row stored before plans were is planned
 * from its request, as it always was. Throws when the plan's model is no longer in the catalog.
 */
export async function planOfRow(ctx: Planning, auth: AuthenticatedKey, row: GenerationRow): Promise<GenerationPlan> {
  const stored = storedPlan(row);
  if (stored === undefined) return await planFor(ctx, auth, row.operation, JSON.parse(row.request) as unknown);
  if (!ctx.catalog.findModel(`${stored.model}:${stored.version}`))
    throw new ApiError('not_found_error', `the model ${stored.model}:${stored.version} is not in the catalog any more`);
  // As planFor does: the run's read of the providers' health (launch).
  await ctx.providerHealth.refresh();
  return stored;
}
