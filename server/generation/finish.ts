import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { GeneratedItem, GenerationPlan, GenerationResponse } from '../../shared/api/index.ts';
import type { ProbeResult } from '../../shared/node/ffmpeg.ts';
import { ApiError } from '../errors.ts';
import type { Db } from '../storage/db.ts';
import { newMediaId } from '../storage/layout.ts';
import { getMedia, toGeneratedItem } from '../storage/media-repo.ts';
import type { NewMedia } from '../storage/media-repo.ts';
import { deleteProviderJob } from '../storage/provider-jobs.ts';
import type { ProviderJobTerms } from '../storage/provider-jobs.ts';
import type { GenerationServices } from './services.ts';
import { insertItems, placeItem, removeItemFiles } from './store.ts';
import { fileUrls } from './urls.ts';

/**
 * Where an asynchronous generation is (GET /generations/:id `status`), with the provider's queue
 * position or progress when it reports one.
 */
export type StepReport = (
  step: 'queued' | 'generating' | 'transcoding' | 'thumbnail' | 'storing',
  report?: { queuePosition?: number | undefined; progress?: number | undefined },
) => void;

/** A generation whose provider has delivered: what the pipeline, storage and the answer need. */
export interface Delivered {
  plan: GenerationPlan;
  /** Who it is for and what it is charged (`unitPrice`: USD per item). */
  terms: Omit<ProviderJobTerms, 'item'>;
  provider: { id: string; slug: string; name: string };
  /** The provider's master files, one per item, with what ffprobe already read of them. */
  masters: Array<{ path: string; probed?: ProbeResult }>;
  generationTime: number;
  /** The provider_jobs rows, removed in the transaction that commits the items. */
  providerJobs?: readonly string[];
  /** Called inside that transaction too, with its handle (the idempotency record, the generation's result). */
  commit?: (body: GenerationResponse, tx: Db) => Promise<void>;
  step?: StepReport;
}

/**
 * The steps after generation, shared by a live request and a remote job resumed after a restart:
 * pipeline each master, place its files, then commit items, charge, idempotency record and the
 * end of the provider job in one transaction. Items placed but not committed are removed.
 */
export async function finishGeneration(
  ctx: GenerationServices,
  d: Delivered,
  workDir: string,
  signal: AbortSignal,
): Promise<GenerationResponse> {
  const { plan, terms } = d;
  const processStart = performance.now();
  const now = ctx.clock.now();
  const placing: string[] = [];
  let committed = false;
  try {
    const placed: NewMedia[] = [];
    for (const [i, master] of d.masters.entries()) {
      // One directory per item: the pipeline writes fixed file names.
      const dir = join(workDir, `pipeline-${i}`);
      await mkdir(dir, { recursive: true });
      d.step?.('transcoding');
      const result = await ctx.runPipeline({
        kind: plan.kind,
        master: master.path,
        workDir: dir,
        signal,
        ...(master.probed ? { probed: master.probed } : {}),
      });
      crashPoint('rendered');
      // The pipeline makes the thumbnail beside the transcode; placing it is what remains.
      d.step?.('thumbnail');
      const id = newMediaId();
      placing.push(id);
      placed.push(
        await placeItem(ctx.blobs, ctx.logger, result.formats, result.thumbnail, {
          id,
          user_id: terms.user,
          key_id: terms.keyId,
          kind: plan.kind,
          model: plan.model,
          model_version: plan.version,
          provider_id: d.provider.id,
          provider_slug: d.provider.slug,
          provider_name: d.provider.name,
          prompt: plan.prompt,
          size: plan.size,
          duration: plan.kind === 'video' ? round(result.duration, 3) : 0,
          width: result.width,
          height: result.height,
          price: round(terms.unitPrice, 6),
          public: plan.public ? 1 : 0,
          created_at: now,
          expires_at: now + terms.retentionMs,
          ...(plan.variationOf !== undefined ? { variation_of: plan.variationOf } : {}),
        }),
      );
    }
    crashPoint('placed');
    d.step?.('storing');
    const processingTime = (performance.now() - processStart) / 1000;
    const urls = fileUrls(ctx, terms.user);
    // Every item, its charge and the idempotency record land together or not at all: a repeat
    // after a crash either finds the first answer, or finds nothing charged and runs again.
    const response = await ctx.db.transaction(async (tx): Promise<GenerationResponse> => {
      await insertItems(tx, placed);
      // The job's row goes with its items, and only one commit can remove it: a node that resumed
      // the same job (its holder looked gone, during a database restart: job-claims.ts) and
      // committed first leaves nothing to remove, and this commit rolls back: charged once.
      for (const job of d.providerJobs ?? [])
        if (!(await deleteProviderJob(tx, job)))
          throw new ApiError(
            'internal_error',
            'this generation was finished by another node of the service: its items are in the library, charged once',
          );
      const data: GeneratedItem[] = [];
      for (const p of placed) {
        const row = await getMedia(tx, p.id);
        if (row) data.push(toGeneratedItem(row, urls));
      }
      const body: GenerationResponse = {
        success: true,
        data,
        price: round(terms.unitPrice * d.masters.length, 6),
        created: Math.floor(now / 1000),
        stats: {
          setupTime: round(terms.setupTime, 3),
          processingTime: round(processingTime, 3),
          generationTime: round(d.generationTime, 3),
          retries: terms.retries,
          providerId: d.provider.id,
          providerSlug: d.provider.slug,
          routing: plan.routing,
          ignoredParameters: terms.ignoredParameters,
        },
      };
      await d.commit?.(body, tx);
      return body;
    });
    committed = true;
    crashPoint('committed');
    return response;
  } finally {
    // Items placed but never committed (a later item failed): nothing points at their files.
    if (!committed) {
      for (const id of placing) await removeItemFiles(ctx.blobs, ctx.logger, id);
    }
  }
}

/**
 * Test hook: `CLIPDESK_TEST_CRASH_AT=<step>` makes the process SIGKILL itself when a generation
 * reaches that step ('submitted': a remote provider accepted the job and it is persisted;
 * 'rendered': a master is through the pipeline; 'placed': every item's files are in place, nothing
 * committed; 'committed': items, charges and idempotency record are committed, the answer not yet
 * sent). test/integration/server/idempotency-crash.test.ts and remote-resume.test.ts kill a
 * standalone service at these to prove a repeated request is answered once and charged once.
 */
export function crashPoint(step: 'submitted' | 'rendered' | 'placed' | 'committed'): void {
  if (process.env['CLIPDESK_TEST_CRASH_AT'] === step) process.kill(process.pid, 'SIGKILL');
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
