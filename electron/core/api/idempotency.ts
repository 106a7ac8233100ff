import { randomUUID } from 'node:crypto';

/** A fresh Idempotency-Key. Create it once per generation and persist it with the job. */
export function newIdempotencyKey(): string {
  return randomUUID();
}
