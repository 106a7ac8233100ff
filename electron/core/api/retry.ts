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

/**
 * A wait before something is tried again, told before it starts so no caller waits in silence
 * (the queue shows it on the job, the CLI on stderr).
 */
export interface WaitNotice {
  /**
   * `retry`: a try failed (a broken connection, a 5xx) and is tried again after a backoff;
   * `rate_limit`: a 429 with Retry-After; `rate_window`: the rate window is spent until its reset.
   */
  reason: 'retry' | 'rate_limit' | 'rate_window';
  ms: number;
  /** What waits, e.g. `GET /generations/gen_1` or `the upload of frame.png`. */
  what: string;
  /** The service's message for a 429; the failure's for a retry. */
  message?: string;
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

/**
 * The backoff before retry number `failures + 1` (0-based `failures` so far), taken from `budget`;
 * null when `maxRetries` are spent or the budget has no room for it (give up now).
 */
export function takeBackoff(
  failures: number,
  maxRetries: number,
  policy: RetryPolicy,
  budget: RetryBudget,
  random: () => number,
): number | null {
  if (failures >= maxRetries) return null;
  return budget.take(backoffDelay(failures, policy, random));
}

/** What a retried operation draws on: the policy, time and chance (tests pass a fake sleep). */
export interface RetryDeps {
  policy: RetryPolicy;
  sleep: Sleep;
  random: () => number;
}

export const DEFAULT_RETRY_DEPS: RetryDeps = { policy: DEFAULT_RETRY_POLICY, sleep: realSleep, random: Math.random };

export interface RetryingOptions {
  /** What waits, as the notice says it: `the upload of frame.png`. */
  what: string;
  /** Whether a failure is worth another try (a broken connection is; the service's refusal is not). */
  retryable: (error: unknown) => boolean;
  /** Tries after the first; the policy's `maxRetries` when not given. */
  maxRetries?: number;
  /**
   * What the waits draw from: a job's budget, so a transfer's waits count with its calls'; one of
   * the policy's `maxTotalWaitMs` when not given.
   */
  budget?: RetryBudget;
  /**
   * The wait before the next try after `failures` failures, and why: the policy's backoff
   * (`retry`) when not given; a caller that knows better (a 429's Retry-After, a fixed interval)
   * says so. Taken from the budget all the same.
   */
  waitFor?: (failures: number, error: unknown) => { ms: number; reason: WaitNotice['reason'] };
  /** Told before every wait. */
  onWait?: (notice: WaitNotice) => void;
  signal?: AbortSignal;
}

/**
 * The one retry loop of the app (its transfers, the job runner's repeats): runs `attempt` until it
 * succeeds, fails in a way not worth another try, or the retries or the budget are spent (then
 * its last error is thrown). Each wait is taken from the budget and told first.
 */
export async function retrying<T>(
  deps: RetryDeps,
  options: RetryingOptions,
  attempt: (tries: number) => Promise<T>,
): Promise<T> {
  const budget = options.budget ?? new RetryBudget(deps.policy.maxTotalWaitMs);
  const maxRetries = options.maxRetries ?? deps.policy.maxRetries;
  for (let failures = 0; ; failures++) {
    try {
      return await attempt(failures);
    } catch (error) {
      if (options.signal?.aborted || !options.retryable(error) || failures >= maxRetries) throw error;
      const planned = options.waitFor?.(failures, error) ?? {
        ms: backoffDelay(failures, deps.policy, deps.random),
        reason: 'retry' as const,
      };
      const wait = budget.take(planned.ms);
      if (wait === null) throw error;
      options.onWait?.({ reason: planned.reason, ms: wait, what: options.what, message: failureMessage(error) });
      await deps.sleep(wait, options.signal);
    }
  }
}

function failureMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
