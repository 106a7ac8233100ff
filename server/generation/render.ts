import type { ProbeResult } from '../../shared/node/ffmpeg.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError } from '../errors.ts';
import { isRenderError } from '../providers/errors.ts';
import { isProviderError } from '../providers/remote/contract.ts';
import { InputSchemaRefusal } from '../providers/remote/input-schemas.ts';
import { sleep } from '../providers/remote/webhooks.ts';
import type { LocalProvider } from '../providers/types.ts';
import type { RouteCandidate } from '../routing/route.ts';
import type { GenerationPlan } from '../../shared/api/index.ts';
import { renderRemoteItems } from './remote-items.ts';
import type { ResumedItems } from './remote-items.ts';
import type { ProviderHealthTracker } from '../providers/remote/health.ts';
import type { GenerationServices } from './services.ts';
import type { Commit, RunOptions } from './run-options.ts';
import { subDir } from './work-dir.ts';

interface Rendered {
  candidate: RouteCandidate;
  masters: Array<{ path: string; probed?: ProbeResult }>;
  retries: number;
  cost?: number;
  /** provider_jobs rows: one, or one per item for video variations (a video job makes one video). */
  providerJobs?: string[];
}

/**
 * Tries the candidates in routing order (`candidates`: the plan's, less those cooling down). What a
 * failure leads to (docs/providers.md, "How provider jobs run"):
 * a refused key marks the provider unhealthy and falls back; a 429 is waited out once when its
 * Retry-After is short, else falls back; a 5xx is retried once, then falls back; a timeout (the
 * runner has canceled the job) and a malformed or failed job fall back; a content-policy refusal
 * is the client's 422 and an input the provider refuses its 400, with no fallback.
 */
export async function renderWithFallback(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  plan: GenerationPlan,
  candidates: RouteCandidate[],
  at: {
    startImage: string | undefined;
    endImage: string | undefined;
    workDir: string;
    setupTime: number;
    commit: Commit | undefined;
    signal: AbortSignal;
    run: RunOptions;
    resumed: ResumedItems | undefined;
  },
): Promise<Rendered> {
  const signal = at.signal;
  let retries = 0;
  const failures: string[] = [];
  const refusals: string[] = [];
  const order = inRankingOrder(ctx.providerHealth, plan, candidates);
  // The provider that has the previous run's jobs goes first: they are polled, not paid for again.
  const first = order.findIndex((c) => c !== 'cooling' && c.provider.id === at.resumed?.providerId);
  if (first > 0) order.unshift(...order.splice(first, 1));
  for (const [index, candidate] of order.entries()) {
    // Passed over for its cooldown (it failed just before): a fallback like a failure now, so it
    // counts in stats.retries as a local provider that fails every time does (docs/api.md).
    if (candidate === 'cooling') {
      retries++;
      continue;
    }
    const provider = candidate.provider;
    for (let attempt = 0; ; attempt++) {
      try {
        const dir = await subDir(at.workDir, `render-${index}-${attempt}`);
        if (provider.kind !== 'remote') {
          // A remote job stays `queued` until its provider reports it running (runRemoteAttempt).
          at.run.step?.('generating');
          const masters = await renderLocal(plan, candidate, provider, at.startImage, dir, signal);
          return { candidate, masters, retries };
        }
        const outcome = await renderRemoteItems(ctx, auth, plan, candidate, provider, { ...at, dir, retries });
        await ctx.providerHealth.success(provider.id);
        return { candidate, retries, ...outcome };
      } catch (error) {
        if (ctx.shutdown.aborted) throw new ApiError('provider_unavailable', 'the service is shutting down');
        if (signal.aborted) throw new ApiError('invalid_request_error', 'the generation was canceled');
        // Input no provider can use (a start image that does not decode) is the client's error:
        // falling back would only fail again and count as provider retries.
        if (isRenderError(error) && error.code === 'invalid_input')
          throw new ApiError('invalid_request_error', error.message);
        if (!isProviderError(error)) {
          retries++;
          failures.push(`${provider.slug}: ${describe(error)}`);
          ctx.logger.warn(`provider ${provider.slug} failed (${describe(error)}); trying the next`);
          break;
        }
        // Written before anything else is tried or answered: the next request may go to another node.
        await ctx.providerHealth.failure(provider.id, error);
        if (error.errorClass === 'content_policy') {
          throw new ApiError('content_policy_violation', error.message, { provider: provider.id });
        }
        // Refused by the model's schema before anything was sent: another provider may take it
        // (docs/providers.md, "Request schemas"); when none does, the request is a 400.
        if (error instanceof InputSchemaRefusal) {
          refusals.push(error.message);
          failures.push(error.message);
          retries++;
          break;
        }
        if (error.errorClass === 'invalid_input') throw new ApiError('invalid_request_error', error.message);
        retries++;
        const wait = error.retryAfterSeconds ?? 1;
        // Retries ask for a new job: only when the provider turned the request away, never once
        // it had accepted a job (that one may still run, and be paid for).
        const retry = attempt === 0 && !error.afterSubmit;
        if (retry && error.errorClass === 'rate_limited' && wait <= ctx.remote.maxRateLimitWaitSeconds) {
          ctx.logger.warn(`${provider.name} is rate limited; waiting ${wait} s (its Retry-After) before asking again`);
          await sleep(wait * 1000, signal).catch(() => undefined);
          continue;
        }
        if (retry && error.errorClass === 'server') {
          ctx.logger.warn(`${error.message}; retrying ${provider.name} once`);
          continue;
        }
        failures.push(error.message);
        ctx.logger.warn(`${error.message} (${error.errorClass}); trying the next provider`);
        break;
      }
    }
  }
  // Every provider tried would have refused the request's values: the client's to change.
  if (refusals.length > 0 && refusals.length === failures.length)
    throw new ApiError(
      'invalid_request_error',
      `no provider of ${plan.model} takes this request: ${refusals.join('; ')}`,
    );
  const tried = candidates.map((c) => c.provider.slug).join(', ');
  throw new ApiError(
    'provider_unavailable',
    `every provider for ${plan.model} failed (tried ${tried})${failures.length > 0 ? `: ${failures.join('; ')}` : ''}`,
  );
}

/** The usable candidates in routing order, with 'cooling' where a provider in its cooldown would rank. */
function inRankingOrder(
  health: ProviderHealthTracker,
  plan: GenerationPlan,
  candidates: RouteCandidate[],
): Array<RouteCandidate | 'cooling'> {
  const usable = new Map(candidates.map((c) => [c.provider.id, c]));
  const order: Array<RouteCandidate | 'cooling'> = [];
  for (const ranked of plan.ranking) {
    const candidate = usable.get(ranked.provider);
    if (candidate) {
      order.push(candidate);
      usable.delete(ranked.provider);
    } else if (health.inCooldown(ranked.provider)) order.push('cooling');
  }
  return [...order, ...usable.values()];
}

async function renderLocal(
  plan: GenerationPlan,
  candidate: RouteCandidate,
  provider: LocalProvider,
  startImage: string | undefined,
  dir: string,
  signal: AbortSignal,
): Promise<Array<{ path: string }>> {
  const masters: Array<{ path: string }> = [];
  const ignored = candidate.ignoredParameters;
  for (let i = 0; i < plan.count; i++) {
    const out = await provider.render({
      kind: plan.kind,
      model: `${plan.model}:${plan.version}`,
      prompt: plan.prompt,
      seed: (plan.seed + i) % 2 ** 31,
      width: plan.width,
      height: plan.height,
      durationSeconds: plan.duration,
      style: ignored.includes('style') ? undefined : plan.style,
      startImagePath: ignored.includes('image_url') ? undefined : startImage,
      workDir: await subDir(dir, `item-${i}`),
      signal,
    });
    masters.push({ path: out.path });
  }
  return masters;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
