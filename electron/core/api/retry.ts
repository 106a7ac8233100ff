/** Backoff and waiting, with time and randomness injectable so tests never sleep for real. */
export interface RetryPolicy {
  /** Retries of idempotent requests after a network error or a 5xx. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retries after 429 before the rate_limit error is reported. */
  maxRateLimitRetries: number;
  /** Cap on one wait for retry_after or a window reset. */
  maxRateLimitWaitMs: number;
  /** Cap on all of one call's retry waits together (a RetryBudget given to the call replaces it). */
  maxTotalWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRateLimitRetries: 3,
  maxRateLimitWaitMs: 65_000,
  maxTotalWaitMs: 120_000,
};

/**
 * The one owner of how long retries may wait in all: every layer that would wait before trying
 * again (the client's transport, the job queue's runner, the queue's wait after a 429) takes the
 * wait from one budget and gives up when it refuses, so layers nested in one another never add
 * their waits past its total (docs/architecture.md, "The job queue and the API client").
 */
export class RetryBudget {
  readonly totalMs: number;
  #spentMs = 0;

  constructor(totalMs: number) {
    this.totalMs = Math.max(0, totalMs);
  }

  /** Waited so far. */
  get spentMs(): number {
    return this.#spentMs;
  }

  /** Takes `ms` for the next wait: `ms` when it fits in what is left, else null (give up now). */
  take(ms: number): number | null {
    const wait = Math.max(0, Math.round(ms));
    if (this.#spentMs + wait > this.totalMs) return null;
    this.#spentMs += wait;
    return wait;
  }
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Real sleep that rejects with the signal's reason when aborted. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Exponential backoff with full jitter in the upper half: attempt 0 → ~base. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The wait for a 429: retry_after (capped) plus up to 10 % (at most 1 s) of jitter. */
export function rateLimitDelay(
  retryAfterSeconds: number | undefined,
  policy: RetryPolicy,
  random: () => number,
): number {
  const base = Math.min((retryAfterSeconds ?? 1) * 1000, policy.maxRateLimitWaitMs);
  return Math.round(base + random() * Math.min(1000, base * 0.1 + 50));
}
