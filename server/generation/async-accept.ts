import { setTimeout as delay } from 'node:timers/promises';
import type { Generation, GenerationPlan, GenerationResponse } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import {
  completeGeneration,
  generationByIdempotencyKey,
  getGeneration,
  insertGeneration,
  newGenerationId,
  toGeneration,
} from '../storage/generations.ts';
import type { GenerationOperation, GenerationRow } from '../storage/generations.ts';
import {
  idempotencyEndpoint,
  idempotencyFingerprint,
  mismatchError,
  sameRequest,
  storedResult,
} from './idempotency.ts';
import { planFor } from './request-plan.ts';
import type { GenerationScope, GenerationServices } from './services.ts';
import { storeRequest } from './store-request.ts';

/** How long an asynchronous request waits, after a synchronous one with its key ended, to look again. */
const LOOK_AGAIN_MS = 10;

/**
 * Starts a generation just stored with its plan: here, or queued for a node (the strategy the
 * Generations object was built with, generations.ts).
 */
export type StartGeneration = (auth: AuthenticatedKey, row: GenerationRow, plan: GenerationPlan) => Promise<void>;

/** A request as its Idempotency-Key's generation is checked against (sameRequest). */
type KeyedRequest = { key: string; operation: GenerationOperation; raw: unknown };

/**
 * `Prefer: respond-async`: validates and plans the request now (a bad request is still a 400),
 * stores the generation and runs it in the background, tied to the service's lifetime. With an
 * Idempotency-Key, a repeat of the same request gets the generation the first one made.
 */
export async function startAsyncGeneration(
  ctx: GenerationScope,
  start: StartGeneration,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
  idempotencyKey: string | undefined,
): Promise<{ generation: Generation; replayed: boolean }> {
  if (idempotencyKey === undefined) return await accept(ctx, start, auth, operation, raw, undefined);
  const idempotency = {
    key: idempotencyKey,
    fingerprint: idempotencyFingerprint(idempotencyKey, idempotencyEndpoint(operation), raw),
  };
  // One key space with synchronous requests (docs/api.md). A synchronous one with this key running
  // here is waited for outside the key's turn (it takes the turn itself), then looked at again.
  for (;;) {
    const step = await ctx.keys.keyTurn(
      auth.user,
      idempotency.key,
      async (): Promise<
        { running: Promise<unknown> } | { accepted: { generation: Generation; replayed: boolean } }
      > => {
        const running = ctx.keys.runningResult(auth.user, idempotency);
        return running ? { running } : { accepted: await accept(ctx, start, auth, operation, raw, idempotency) };
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
  ctx: GenerationServices,
  start: StartGeneration,
  auth: AuthenticatedKey,
  operation: GenerationOperation,
  raw: unknown,
  idempotency: { key: string; fingerprint: string } | undefined,
): Promise<{ generation: Generation; replayed: boolean }> {
  const request = { key: idempotency?.key ?? '', operation, raw };
  if (idempotency) {
    const earlier = await generationByIdempotencyKey(ctx.db, auth.user, idempotency.key);
    if (earlier) return { generation: replayOf(earlier, request), replayed: true };
    const answered = await storedResult<GenerationResponse>(ctx.db, ctx.clock.now(), auth.user, idempotency);
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
  // Here, or on the node the queue picks (PostgreSQL): the strategy the service was wired with.
  await start(auth, row, plan);
  return { generation: toGeneration(row), replayed: false };
}

function replayOf(row: GenerationRow, request: KeyedRequest): Generation {
  if (!sameRequest(row.idempotency_fingerprint, request)) throw mismatchError();
  return toGeneration(row);
}

/**
 * A generation, succeeded already, that answers with a synchronous request's result: the row and
 * its result in one transaction, so a restart never finds it queued (and runs it again). A row
 * with the key stored meanwhile (the key's unique index) is answered instead.
 */
async function storeSucceeded(
  ctx: GenerationServices,
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
export async function checkWebhookField(
  checkWebhookTarget: (url: string) => Promise<string>,
  raw: unknown,
): Promise<void> {
  const url = webhookOf(typeof raw === 'object' && raw !== null ? raw : {});
  if (url !== undefined) await checkWebhookTarget(url);
}
