import type { GenerationPlan } from '../../shared/api/index.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import { ApiError } from '../errors.ts';
import { endGeneration, insertGeneration, newGenerationId } from '../storage/generations.ts';
import type { GenerationOperation } from '../storage/generations.ts';
import type { GenerationQueue } from '../storage/generation-queue.ts';
import type { GenerationServices } from './services.ts';

/**
 * Stores a request and its plan as a new generation, queued; `inserted` false when its Idempotency-Key was
 * stored meanwhile by a repeat (the key's unique index), and nothing was.
 */
export async function storeRequest(
  ctx: GenerationServices,
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
  ctx: GenerationServices,
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
