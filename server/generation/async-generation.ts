import { setTimeout as delay } from 'node:timers/promises';
import type { Generation, GenerationPlan, GenerationResponse, MediaKind } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { keyById } from '../auth/api-keys.ts';
import type { GenerationCommit } from './remote-job.ts';
import type { ServiceContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import {
  completeGeneration,
  endGeneration,
  generationByIdempotencyKey,
  getGeneration,
  insertGeneration,
  isFinal,
  newGenerationId,
  openGenerations,
  storedPlan,
  toGeneration,
  updateGenerationStep,
} from '../storage/generations.ts';
import type { GenerationOperation, GenerationRow } from '../storage/generations.ts';
import type { StepReport } from './finish.ts';
import { planImage, planVideo } from './plan.ts';
import { runGeneration } from './generate.ts';
import {
  idempotencyEndpoint,
  idempotencyFingerprint,
  mismatchError,
  keyTurn,
  runningResult,
  sameRequest,
  storedResult,
} from './idempotency.ts';
import { dropProviderJobs, resumeProviderJobs } from './remote-job.ts';
import { unfinishedProviderJobs } from '../storage/provider-jobs.ts';
import { planVariation } from './variations.ts';
import { LeaseLost } from './lease.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import { generationEnded } from './generation-ends.ts';
import { takeHeld } from './slot-handoff.ts';

/** Plans an operation's request (validation, model, routing): at request time and again on resume. */
export async function planFor(
  ctx: ServiceContext,
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
export async function planOfRow(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  row: GenerationRow,
): Promise<GenerationPlan> {
  const stored = storedPlan(row);
  if (stored === undefined) return await planFor(ctx, auth, row.operation, JSON.parse(row.request) as unknown);
  if (!ctx.catalog.findModel(`${stored.model}:${stored.version}`))
    throw new ApiError('not_found_error', `the model ${stored.model}:${stored.version} is not in the catalog any more`);
  // As planFor does: the run's read of the providers' health (launch).
  await ctx.providerHealth.refresh();
  return stored;
}

/** How long an asynchronous request waits, after a synchronous one with its key ended, to look again. */
const LOOK_AGAIN_MS = 10;

/** The cancel of each generation running in this process (its abort reason: Canceled or LeaseLost). */
const running = new WeakMap<ServiceContext, Map<string, AbortController>>();

export function controllers(ctx: ServiceContext): Map<string, AbortController> {
  let map = running.get(ctx);
  if (!map) {
    map = new Map();
    running.set(ctx, map);
  }
  return map;
}

/** What ends the run of a canceled generation; its commit refuses, so nothing is stored or charged. */
export class Canceled extends Error {
  constructor() {
    super('the generation was canceled');
    this.name = 'Canceled';
  }
}

/**
 * `Prefer: respond-async`: validates and plans the request now (a bad request is still a 400),
 * stores the generation and runs it in the background, tied to the service's lifetime. With an
 * Idempotency-Key, a repeat of the same request gets the generation the first one made.
 */
export async function startAsyncGeneration(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
  idempotencyKey: string | undefined,
): Promise<{ generation: Generation; replayed: boolean }> {
  if (idempotencyKey === undefined) return await accept(ctx, auth, operation, raw, undefined);
  const idempotency = {
    key: idempotencyKey,
    fingerprint: idempotencyFingerprint(idempotencyKey, idempotencyEndpoint(operation), raw),
  };
  // One key space with synchronous requests (docs/api.md). A synchronous one with this key running
  // here is waited for outside the key's turn (it takes the turn itself), then looked at again.
  for (;;) {
    const step = await keyTurn(
      ctx,
      auth.user,
      idempotency.key,
      async (): Promise<{ running: Promise<unknown> } | { accepted: Awaited<ReturnType<typeof accept>> }> => {
        const running = runningResult(ctx, auth.user, idempotency);
        return running ? { running } : { accepted: await accept(ctx, auth, operation, raw, idempotency) };
      },
    );
    if ('accepted' in step) return step.accepted;
    await step.running.catch(() => undefined);
    // Its result is recorded (and the request let go of) a moment after it resolves: a macrotask,
    // so the next look finds it rather than spin on the same settled request.
    await delay(LOOK_AGAIN_MS);
  }
}

/**
 * Stores and starts the generation; with an Idempotency-Key, the generation it already names, or
 * one that answers with a synchronous request's result for it.
 */
async function accept(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
  idempotency: { key: string; fingerprint: string } | undefined,
): Promise<{ generation: Generation; replayed: boolean }> {
  const request = { key: idempotency?.key ?? '', operation, raw };
  if (idempotency) {
    const earlier = await generationByIdempotencyKey(ctx.db, auth.user, idempotency.key);
    if (earlier) return { generation: replayOf(earlier, request), replayed: true };
    const answered = await storedResult<GenerationResponse>(ctx, auth.user, idempotency);
    if (answered !== undefined) {
      const made = await storeSucceeded(ctx, auth, operation, raw, idempotency, answered);
      return { generation: replayOf(made, request), replayed: true };
    }
  }
  const plan = await planFor(ctx, auth, operation, raw);
  const given = webhookOf(raw);
  // The normalized URL is the one stored, shown and delivered to.
  const webhookUrl = given === undefined ? undefined : await ctx.checkWebhookTarget(given);
  const { id, inserted } = await storeRequest(ctx, auth, operation, raw, plan, {
    webhookUrl: webhookUrl ?? null,
    ...(idempotency ? { idempotency } : {}),
  });
  if (!inserted && idempotency) {
    // A repeat (on any node) stored it between the look-up and the insert: the key's unique index.
    const earlier = await generationByIdempotencyKey(ctx.db, auth.user, idempotency.key);
    if (earlier) return { generation: replayOf(earlier, request), replayed: true };
  }
  const row = await getGeneration(ctx.db, id);
  if (!row) throw new Error(`generation ${id} vanished`);
  // Here, or on the node the queue picks (PostgreSQL): the runner the service was wired with.
  await ctx.runner.start(ctx, auth, row, plan);
  return { generation: toGeneration(row), replayed: false };
}

/**
 * Stores a request and its plan as a new generation, queued; `inserted` false when its Idempotency-Key was
 * stored meanwhile by a repeat (the key's unique index), and nothing was.
 */
export async function storeRequest(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
  plan: GenerationPlan,
  options: { webhookUrl: string | null; idempotency?: { key: string; fingerprint: string }; synchronous?: boolean },
): Promise<{ id: string; inserted: boolean }> {
  const id = newGenerationId();
  const inserted = await insertGeneration(ctx.db, {
    id,
    user_id: auth.user,
    key_id: auth.keyId,
    operation,
    request: JSON.stringify(raw),
    plan,
    webhook_url: options.webhookUrl,
    created_at: ctx.clock.now(),
    ...(options.idempotency ? { idempotency: options.idempotency } : {}),
    ...(options.synchronous === true ? { synchronous: true } : {}),
  });
  return { id, inserted };
}

/**
 * Queues a stored generation (PostgreSQL). A job not queued fails the request now (503), and its
 * row ends `failed`, rather than leaving a generation nobody runs.
 */
export async function enqueueOrFail(
  ctx: ServiceContext,
  queue: GenerationQueue,
  id: string,
  options?: { synchronous?: boolean },
): Promise<void> {
  try {
    await queue.enqueue(id, options);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    ctx.logger.error(`generation ${id} could not be queued: ${why}`);
    await endGeneration(
      ctx.db,
      id,
      'failed',
      { type: 'api_error', message: 'the generation could not be queued' },
      ctx.clock.now(),
    );
    throw new ApiError('provider_unavailable', 'the generation queue cannot be reached; try again shortly');
  }
}

function replayOf(row: GenerationRow, request: Parameters<typeof sameRequest>[1]): Generation {
  if (!sameRequest(row.idempotency_fingerprint, request)) throw mismatchError();
  return toGeneration(row);
}

/**
 * A generation, succeeded already, that answers with a synchronous request's result: the row and
 * its result in one transaction, so a restart never finds it queued (and runs it again). A row
 * with the key stored meanwhile (the key's unique index) is answered instead.
 */
async function storeSucceeded(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
  idempotency: { key: string; fingerprint: string },
  body: GenerationResponse,
): Promise<GenerationRow> {
  const id = await ctx.db.transaction(async (tx) => {
    const made = newGenerationId();
    const now = ctx.clock.now();
    const inserted = await insertGeneration(tx, {
      id: made,
      user_id: auth.user,
      key_id: auth.keyId,
      operation,
      request: JSON.stringify(raw),
      webhook_url: null,
      created_at: now,
      idempotency,
    });
    if (inserted) await completeGeneration(tx, made, body, now);
    return inserted ? made : undefined;
  });
  const row =
    id !== undefined
      ? await getGeneration(ctx.db, id)
      : await generationByIdempotencyKey(ctx.db, auth.user, idempotency.key);
  if (!row) throw new Error('the generation answering a synchronous result vanished');
  return row;
}

function webhookOf(raw: unknown): string | undefined {
  const url = (raw as { webhook_url?: unknown }).webhook_url;
  return typeof url === 'string' ? url : undefined;
}

/** Validates a synchronous request's `webhook_url` like an asynchronous one's (it is not used there). */
export async function checkWebhookField(ctx: ServiceContext, raw: unknown): Promise<void> {
  const url = webhookOf(typeof raw === 'object' && raw !== null ? raw : {});
  if (url !== undefined) await ctx.checkWebhookTarget(url);
}

/**
 * Runs a stored generation in the background and ends it in a final state. `plan`: made just now
 * by planFor (its read of the providers' health serves the run, unless the run waits for a
 * concurrency slot first). `owner`: the queue's attempt that holds it (PostgreSQL); the commit
 * refuses once the row is another's. `synchronous`: a synchronous request's, admitted when the
 * request was (its concurrency slot and storage reservation, slot-handoff.ts): it never waits for a slot.
 */
export function launch(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  row: GenerationRow,
  plan: GenerationPlan,
  owner?: string,
  synchronous = false,
): Promise<Settled> {
  const follow = followed(ctx, row.id, owner);
  const work = ctx.track(execute(ctx, auth, row, plan, follow, synchronous));
  return settle(ctx, row.id, work, follow.cancel);
}

export interface Followed {
  cancel: AbortController;
  signal: AbortSignal;
  step: StepReport;
  commit: GenerationCommit;
}

/** A generation's cancel, step reports and commit (success, unless canceled, with the items). */
export function followed(ctx: ServiceContext, id: string, owner?: string): Followed {
  const cancel = new AbortController();
  controllers(ctx).set(id, cancel);
  let last = '';
  // Step reports are written in the order they come, without holding the work up; a failed write
  // is only logged (the next step or the end writes the row again).
  let writing: Promise<void> = Promise.resolve();
  return {
    cancel,
    signal: AbortSignal.any([ctx.shutdown, cancel.signal]),
    step: (status, report = {}) => {
      // Polls repeat the same answer: only a change is written.
      const now = `${status}\u0000${report.queuePosition ?? ''}\u0000${report.progress ?? ''}`;
      if (now === last) return;
      last = now;
      const at = ctx.clock.now();
      writing = writing
        .then(() =>
          updateGenerationStep(ctx.db, id, status, at, {
            ...(report.queuePosition !== undefined ? { queuePosition: report.queuePosition } : {}),
            ...(report.progress !== undefined ? { progress: report.progress } : {}),
          }),
        )
        .catch((error: unknown) =>
          ctx.logger.warn(
            `generation ${id}: step not saved: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
    },
    commit: async (body, tx) => {
      // Inside the items' transaction: throwing rolls the items and their charge back. The row is
      // read here too, and on PostgreSQL locked until the commit: whatever ended it canceled (a
      // DELETE, on any node), nothing is charged; a row that is final already or held by another
      // attempt (this node was slow, its lease lapsed and another node took it over) is not
      // committed twice.
      const now = await tx.get<{ status: GenerationRow['status']; lease_owner?: string | null }>(
        tx.dialect === 'postgres'
          ? 'SELECT status, lease_owner FROM generations WHERE id = ? FOR UPDATE'
          : 'SELECT status FROM generations WHERE id = ?',
        id,
      );
      if (cancel.signal.reason instanceof LeaseLost) throw cancel.signal.reason;
      if (cancel.signal.aborted || now?.status === 'canceled') throw new Canceled();
      if (!now || isFinal(now.status) || (owner !== undefined && now.lease_owner !== owner)) throw new LeaseLost(id);
      await completeGeneration(tx, id, body, ctx.clock.now());
    },
  };
}

async function execute(
  ctx: ServiceContext,
  auth: AuthenticatedKey,
  row: GenerationRow,
  plan: GenerationPlan,
  follow: Followed,
  synchronous: boolean,
): Promise<GenerationResponse> {
  // Queued until the account has a free slot of its kind (a synchronous request would get 429),
  // unless a synchronous request's: admitted when the request was. What the request holds, when it
  // is on this node; none when it is on another (it keeps them until the row ends) or gone (a
  // takeover: its slot lapses with its node).
  let waited = false;
  const held = synchronous
    ? (takeHeld(ctx, row.id) ?? { slot: () => undefined, unreserve: () => undefined })
    : undefined;
  const slot = held
    ? held.slot
    : await ctx.concurrency.acquire(
        auth.user,
        plan.kind,
        concurrencyLimit(auth, plan.kind),
        follow.signal,
        () => (waited = true),
      );
  try {
    // Remote variations: the jobs a previous run submitted (a restart, a takeover) are polled as their items.
    const resume = severalJobs(row) ? await unfinishedProviderJobs(ctx.db, row.id) : [];
    return await runGeneration(ctx, auth, plan, follow.commit, {
      ...(resume.length > 0 ? { resume } : {}),
      signal: follow.signal,
      step: follow.step,
      generationId: row.id,
      slot,
      ...(held ? { reservation: held.unreserve } : {}),
      // The plan's read of the providers' health is stale only after a wait (launch's callers plan just before).
      healthReadForPlan: !waited,
    });
  } finally {
    slot();
  }
}

function concurrencyLimit(auth: AuthenticatedKey, kind: MediaKind): number {
  return auth.limits.concurrency[kind];
}

/**
 * How a run ended: `ended` (the row is final, by this node or a DELETE), `stopped` (the service is
 * stopping: the generation resumes on start, or on another node from the queue) or `lost` (another
 * node holds it now, and writes its end).
 */
export type Settled = 'ended' | 'stopped' | 'lost';

/** Ends the generation when its work does (unless the service is stopping: it resumes on start). */
export function settle(
  ctx: ServiceContext,
  id: string,
  work: Promise<unknown>,
  cancel: AbortController,
): Promise<Settled> {
  const done = () => {
    if (controllers(ctx).get(id) === cancel) controllers(ctx).delete(id);
  };
  const ended = work.then(
    async (): Promise<Settled> => {
      done();
      await finished(ctx, id);
      return 'ended';
    },
    async (error: unknown): Promise<Settled> => {
      done();
      if (error instanceof LeaseLost || cancel.signal.reason instanceof LeaseLost) return 'lost';
      if (ctx.shutdown.aborted && !cancel.signal.aborted) return 'stopped';
      if (cancel.signal.aborted) {
        // DELETE has already marked it canceled (and told the hook); this covers any other abort.
        if (await endGeneration(ctx.db, id, 'canceled', canceledError(), ctx.clock.now())) await finished(ctx, id);
        return 'ended';
      }
      const body = endError(error);
      if (!(error instanceof ApiError))
        ctx.logger.error(`generation ${id} failed: ${error instanceof Error ? error.message : String(error)}`);
      if (await endGeneration(ctx.db, id, 'failed', body, ctx.clock.now())) await finished(ctx, id);
      return 'ended';
    },
  );
  // Tracked, so that closing the service waits for the end to be written.
  return ctx.track(ended).catch((error: unknown): Settled => {
    ctx.logger.error(
      `generation ${id}: its end was not saved: ${error instanceof Error ? error.message : String(error)}`,
    );
    // Not final: resumed on start (SQLite), or taken over from the queue (PostgreSQL).
    return 'stopped';
  });
}

/**
 * A failed generation's `error`: an ApiError's code and message, and its `retry_after` (a
 * synchronous request answers with the same 429 or 503 and Retry-After as it would have run here).
 */
function endError(error: unknown): { type: string; message: string; retry_after?: number } {
  if (!(error instanceof ApiError)) return { type: 'api_error', message: 'the generation failed' };
  const wait = error.extra['retry_after'];
  return { type: error.code, message: error.message, ...(typeof wait === 'number' ? { retry_after: wait } : {}) };
}

function canceledError(): { type: string; message: string } {
  return { type: 'canceled', message: 'the generation was canceled (DELETE /v1/generations/:id); nothing was charged' };
}

/** Tells the hook (webhook delivery) about a generation that is final now. */
export async function finished(ctx: ServiceContext, id: string): Promise<void> {
  // A synchronous request on this node waiting for it answers at once (generation-ends.ts).
  generationEnded(ctx, id);
  const row = await getGeneration(ctx.db, id);
  if (!row || !isFinal(row.status)) return;
  try {
    await ctx.generationFinished(
      toGeneration(row),
      row.webhook_url !== null ? { url: row.webhook_url, keyId: row.key_id } : undefined,
    );
  } catch (error) {
    ctx.logger.error(`generationFinished for ${id} threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * `DELETE /generations/:id`: a generation that is not final ends `canceled` now; its run is
 * aborted (a remote job is canceled at the provider, a local render stops) and its items are never
 * committed, so nothing is charged. A final generation is answered as it is.
 */
export async function cancelGeneration(ctx: ServiceContext, row: GenerationRow): Promise<Generation> {
  if (!isFinal(row.status) && (await endGeneration(ctx.db, row.id, 'canceled', canceledError(), ctx.clock.now()))) {
    controllers(ctx).get(row.id)?.abort(new Canceled());
    await finished(ctx, row.id);
  }
  const now = await getGeneration(ctx.db, row.id);
  return toGeneration(now ?? row);
}

/** Remote variations of more than one item run one provider job per item. */
export function severalJobs(row: GenerationRow): boolean {
  if (row.operation !== 'videos.variations') return false;
  const n = (JSON.parse(row.request) as { n?: unknown }).n;
  return typeof n === 'number' && n > 1;
}

/**
 * On start, before the service listens, on one node (SQLite): every generation a previous run left
 * queued or running is resumed here. A remote job the provider had accepted resumes through provider_jobs (polled, never
 * submitted again); remote variations (one job per item) run again with their jobs, each polled as
 * its item and only the items without one submitted; anything else runs from the start, from its
 * stored plan (nothing was committed or charged for it). One that
 * cannot run any more ends `failed`.
 */
export async function resumeInProcess(ctx: ServiceContext): Promise<{ generations: number; providerJobs: number }> {
  const open = await openGenerations(ctx.db);
  const linked = new Set<string>();
  const follows = new Map<string, Followed>();
  const providerJobs = await resumeProviderJobs(ctx, {
    follow: (generationId) => {
      const row = open.find((g) => g.id === generationId);
      // One of several jobs (remote variations: one per item): the generation's own run polls it.
      if (row && severalJobs(row)) return undefined;
      const follow = followed(ctx, generationId);
      // Its generation has ended already (canceled just before the stop): the job is canceled.
      if (!row) {
        follow.cancel.abort(new Canceled());
        controllers(ctx).delete(generationId);
      } else follows.set(generationId, follow);
      return { step: follow.step, commit: follow.commit, signal: follow.signal };
    },
    resumed: (generationId, work) => {
      const follow = follows.get(generationId);
      if (!follow) return;
      linked.add(generationId);
      void settle(ctx, generationId, work, follow.cancel);
    },
  });
  for (const row of open) {
    if (linked.has(row.id)) continue;
    const fail = async (message: string) => {
      // Its jobs (remote variations) are not polled by anything now: not paid for.
      if (severalJobs(row)) await dropProviderJobs(ctx, await unfinishedProviderJobs(ctx.db, row.id));
      if (await endGeneration(ctx.db, row.id, 'failed', { type: 'invalid_request_error', message }, ctx.clock.now()))
        await finished(ctx, row.id);
    };
    const auth = await keyById(ctx.db, row.key_id);
    if (!auth) {
      await fail('the generation cannot resume after the restart: the key that made it was revoked');
      continue;
    }
    let plan: GenerationPlan;
    try {
      plan = await planOfRow(ctx, auth, row);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      await fail(`the generation cannot resume after the restart: its request no longer runs here (${why})`);
      continue;
    }
    await updateGenerationStep(ctx.db, row.id, 'queued', ctx.clock.now());
    ctx.logger.info(`resuming generation ${row.id} (${row.operation}) from the start after a restart`);
    void launch(ctx, auth, row, plan);
  }
  return { generations: open.length, providerJobs };
}
