/**
 * Asynchronous generations (docs/workflows.md): what a submit returns, how often to poll, and how a final
 * generation record becomes the synchronous answer (or the error) callers already handle.
 */
import type { ErrorCode, Generation, GenerationResponse } from '../../../shared/api/index.ts';
import { ERROR_STATUS } from '../../../shared/api/index.ts';
import { isServiceCode, ServiceError } from './errors.ts';

/** A 202 (the service runs it; poll the generation) or a 200 (a service without async mode: done). */
export type GenerationStart = { async: true; generation: Generation } | { async: false; response: GenerationResponse };

export interface PollPolicy {
  /** First wait between polls; it grows by `factor` while nothing changes, up to `maxMs`. */
  initialMs: number;
  maxMs: number;
  factor: number;
}

export const DEFAULT_POLL: PollPolicy = { initialMs: 1_000, maxMs: 10_000, factor: 1.5 };

/** The wait before the next poll after `unchanged` polls that saw nothing new, with 10 % jitter. */
export function pollDelay(unchanged: number, policy: PollPolicy, random: () => number): number {
  const base = Math.min(policy.maxMs, policy.initialMs * policy.factor ** unchanged);
  return Math.round(base * (0.9 + random() * 0.2));
}

/** Codes that make a caller ask again; a final failure never carries one (see generationResult). */
const TRANSIENT = new Set<ErrorCode>(['internal_error', 'rate_limit_exceeded']);

/** A final generation as the synchronous answer; failed and canceled ones throw ServiceError. */
export function generationResult(generation: Generation): GenerationResponse {
  if (generation.status === 'succeeded') {
    return {
      success: true,
      data: generation.data ?? [],
      price: generation.price ?? 0,
      stats: generation.stats ?? { setupTime: 0, processingTime: 0, generationTime: 0, retries: 0, providerId: '' },
    };
  }
  if (generation.status === 'canceled') {
    throw new ServiceError('canceled', `Generation ${generation.id} was canceled`);
  }
  const type = generation.error?.type;
  // A final failure is an answer, not a transport problem: never a code that makes a caller ask
  // again (internal_error, rate_limit_exceeded), or a queue would poll a finished generation in a loop.
  const code: ErrorCode = isServiceCode(type) && !TRANSIENT.has(type) ? type : 'provider_unavailable';
  // The status the synchronous answer would have had, so callers see one error either way.
  const status = isServiceCode(type) ? ERROR_STATUS[type] : undefined;
  throw new ServiceError(code, generation.error?.message ?? `Generation ${generation.id} failed`, {
    ...(status !== undefined ? { status } : {}),
  });
}

/** "Generating", "Transcoding", … : the step as the UI and the CLI name it. */
export function stepLabel(status: Generation['status']): string {
  return status.charAt(0).toUpperCase() + status.slice(1);
}
