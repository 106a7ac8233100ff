import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { RemoteProvider } from '../providers/types.ts';
import type { RouteCandidate } from '../routing/route.ts';
import { deleteProviderJob } from '../storage/provider-jobs.ts';
import type { ProviderJobRow } from '../storage/provider-jobs.ts';
import { leftToAnother } from './lease.ts';
import type { GenerationPlan } from '../../shared/api/index.ts';
import { END_IMAGE_PARAMETER } from '../../shared/api/index.ts';
import { providerParameters, unitPrice } from './plan.ts';
import { dropProviderJobs, runRemoteAttempt, startImageFile, taskAspectRatio } from './remote-job.ts';
import { offerTarget } from '../providers/remote/offer-target.ts';
import type { RemoteOutcome } from './remote-job.ts';
import type { Commit, RunOptions } from './run-options.ts';
import { retentionMs } from './services.ts';
import type { GenerationServices } from './services.ts';
import { subDir } from './work-dir.ts';

/** Where and how a remote candidate renders a generation's items (render.ts hands it over). */
export interface RemoteRender {
  startImage: string | undefined;
  /** The end frame's checked file (image parameter `end_image_url`), when the request has one. */
  endImage: string | undefined;
  dir: string;
  setupTime: number;
  retries: number;
  commit?: Commit | undefined;
  signal: AbortSignal;
  run: RunOptions;
}

/** One item's job: which of several jobs this one is (recorded with the job), and its previous run's job. */
interface ItemRender extends RemoteRender {
  item?: number;
  resume?: ProviderJobRow;
}

/** The items a previous run had submitted, by item index, at the provider they were submitted to. */
export interface ResumedItems {
  providerId: string;
  /** Taken out as each is polled (or its provider given up), so a retry never polls one twice. */
  items: Map<number, ProviderJobRow>;
}

/**
 * Sorts a previous run's jobs: those of its last provider, still usable, are polled as their items;
 * any other (another provider's, or a row that does not name its item) is canceled at once.
 */
export async function resumedItems(
  ctx: GenerationServices,
  rows: ProviderJobRow[],
  candidates: RouteCandidate[],
): Promise<ResumedItems | undefined> {
  const providerId = rows.at(-1)?.providerId;
  const usable = candidates.some((c) => c.provider.id === providerId);
  const items = new Map<number, ProviderJobRow>();
  const dropped: ProviderJobRow[] = [];
  for (const row of rows) {
    if (usable && row.providerId === providerId && row.terms.item !== undefined && !items.has(row.terms.item))
      items.set(row.terms.item, row);
    else dropped.push(row);
  }
  await dropProviderJobs(ctx, dropped);
  return providerId !== undefined && items.size > 0 ? { providerId, items } : undefined;
}

/**
 * A remote video job makes one video: n variations are n jobs, one after the other, seeds seed + i.
 * An item whose job a previous run submitted (`at.resumed`) polls that job instead of submitting.
 * Should one fail, the jobs before it are over too (their rows go; nothing was committed).
 */
export async function renderRemoteItems(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  plan: GenerationPlan,
  candidate: RouteCandidate,
  provider: RemoteProvider,
  at: RemoteRender & { resumed: ResumedItems | undefined },
): Promise<{ masters: RemoteOutcome['masters']; providerJobs: string[]; cost?: number }> {
  const jobs = plan.kind === 'video' ? plan.count : 1;
  const outcomes: RemoteOutcome[] = [];
  const resumed = at.resumed?.providerId === provider.id ? at.resumed.items : undefined;
  try {
    for (let i = 0; i < jobs; i++) {
      const one = jobs === 1 ? plan : { ...plan, count: 1, seed: (plan.seed + i) % 2 ** 31 };
      const dir = jobs === 1 ? at.dir : await subDir(at.dir, `item-${i}`);
      // Once the first item is generating the generation is: a later job's queue is part of it.
      const step = at.run.step;
      const run: RunOptions =
        i === 0 || !step
          ? at.run
          : { ...at.run, step: (status, report) => step(status === 'queued' ? 'generating' : status, report) };
      const resume = resumed?.get(i);
      resumed?.delete(i);
      const item = jobs === 1 ? {} : { item: i, ...(resume ? { resume } : {}) };
      outcomes.push(await renderRemote(ctx, auth, one, candidate, provider, { ...at, dir, run, ...item }));
    }
  } catch (error) {
    if (!leftToAnother(ctx.shutdown, at.signal, error)) {
      for (const o of outcomes) if (o.providerJob !== undefined) await deleteProviderJob(ctx.db, o.providerJob);
      // The previous run's jobs of the items not reached: over too.
      if (resumed) await dropProviderJobs(ctx, [...resumed.values()]);
      resumed?.clear();
    }
    throw error;
  }
  const costs = outcomes.map((o) => o.cost);
  return {
    masters: outcomes.flatMap((o) => o.masters),
    providerJobs: outcomes.flatMap((o) => (o.providerJob === undefined ? [] : [o.providerJob])),
    ...(costs.every((c) => c !== undefined) ? { cost: costs.reduce((a, b) => a + b, 0) } : {}),
  };
}

async function renderRemote(
  ctx: GenerationServices,
  auth: AuthenticatedKey,
  plan: GenerationPlan,
  candidate: RouteCandidate,
  provider: RemoteProvider,
  at: ItemRender,
): Promise<RemoteOutcome> {
  const ignored = candidate.ignoredParameters;
  const parameters = providerParameters(plan, candidate);
  const startImage =
    at.startImage !== undefined && !ignored.includes('image_url') ? await startImageFile(at.startImage) : undefined;
  // Only beside the start frame: an end frame alone would go to the text-to-video endpoint.
  const endImage =
    startImage && at.endImage !== undefined && !ignored.includes(END_IMAGE_PARAMETER)
      ? await startImageFile(at.endImage)
      : undefined;
  return runRemoteAttempt(ctx, {
    provider,
    offer: candidate.offer,
    task: {
      kind: plan.kind,
      modelId: `${plan.model}:${plan.version}`,
      prompt: plan.prompt,
      size: plan.size,
      width: plan.width,
      height: plan.height,
      aspectRatio: taskAspectRatio(plan.width, plan.height, parameters),
      durationSeconds: plan.kind === 'video' ? plan.duration : 0,
      count: plan.kind === 'video' ? 1 : plan.count,
      seed: ignored.includes('seed') ? undefined : plan.seed,
      ...(plan.style !== undefined && !ignored.includes('style') ? { style: plan.style } : {}),
      ...(startImage ? { startImage } : {}),
      ...(endImage ? { endImage } : {}),
      // A silent request says so to a provider that makes sound by default (and charges for it).
      ...(plan.audio === true && !ignored.includes('audio') ? { audio: true } : {}),
      ...(plan.parameters['audio'] === false && candidate.offer.features.includes('audio') ? { audio: false } : {}),
      parameters,
      ...offerTarget(candidate.offer, { kind: plan.kind, startImage }),
      signal: at.signal,
    },
    plan,
    terms: {
      user: auth.user,
      keyId: auth.keyId,
      ignoredParameters: ignored,
      unitPrice: unitPrice(plan, candidate),
      retentionMs: retentionMs(ctx.retentionOverrideSeconds, auth.limits),
      retries: at.retries,
      setupTime: at.setupTime,
      ...(at.item !== undefined ? { item: at.item } : {}),
    },
    ...(at.commit && 'key' in at.commit
      ? { idempotency: { key: at.commit.key, fingerprint: at.commit.fingerprint } }
      : {}),
    workDir: at.dir,
    signal: at.signal,
    ...(at.resume ? { resume: at.resume } : {}),
    ...(at.run.generationId !== undefined ? { generationId: at.run.generationId } : {}),
    ...(at.run.step ? { step: at.run.step } : {}),
  });
}
