import type { JobStatus, RemoteProviderId } from './contract.ts';

/** What a wait ended with: a webhook about the job (with its status when the body carried one), or time. */
export interface Wake {
  woken: boolean;
  status?: JobStatus;
}

/** Deliveries for jobs nobody waits on yet are kept this long (a webhook can beat the submit's answer). */
const EARLY_KEEP_MS = 5 * 60_000;

/**
 * Connects `POST /v1/provider-webhooks/:provider` to the runner waiting on that job: a delivery
 * wakes the wait at once instead of at the next (slow, safety) poll.
 */
export class WebhookHub {
  private readonly waiting = new Map<string, (wake: Wake) => void>();
  private readonly early = new Map<string, { status?: JobStatus; at: number }>();

  /** Whether a runner was waiting on the job (false: kept for a moment in case it is about to). */
  deliver(provider: RemoteProviderId, jobId: string, status?: JobStatus): boolean {
    const slot = `${provider}\u0000${jobId}`;
    const wake = this.waiting.get(slot);
    if (wake) {
      wake({ woken: true, status });
      return true;
    }
    const now = Date.now();
    for (const [key, value] of this.early) if (value.at + EARLY_KEEP_MS < now) this.early.delete(key);
    this.early.set(slot, { status, at: now });
    return false;
  }

  /**
   * Waits up to `ms` for a delivery about the job; resolves early on one (or at once when one came
   * before the wait), and rejects when `signal` aborts.
   */
  sleep(provider: RemoteProviderId, jobId: string, ms: number, signal: AbortSignal): Promise<Wake> {
    const slot = `${provider}\u0000${jobId}`;
    const early = this.early.get(slot);
    if (early) {
      this.early.delete(slot);
      return Promise.resolve({ woken: true, status: early.status });
    }
    return sleep(ms, signal, (wake) => {
      this.waiting.set(slot, wake);
      return () => this.waiting.delete(slot);
    });
  }

  /**
   * Wakes every wait without a status, so each runner polls its job now: deliveries may have been
   * missed (the relay between nodes was disconnected), and one poll each beats the safety poll.
   */
  wakeAll(): void {
    for (const wake of [...this.waiting.values()]) wake({ woken: true });
  }
}

/**
 * `ms` of waiting that `signal` interrupts (rejecting with its reason), and that `listen` may end
 * early: it registers a wake-up and returns how to unregister it.
 */
export function sleep(
  ms: number,
  signal: AbortSignal,
  listen?: (wake: (w: Wake) => void) => () => void,
): Promise<Wake> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let unlisten = (): void => undefined;
    const done = (settle: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      unlisten();
      settle();
    };
    const onAbort = () => done(() => reject(signal.reason as Error));
    const timer = setTimeout(() => done(() => resolve({ woken: false })), Math.max(0, ms));
    signal.addEventListener('abort', onAbort, { once: true });
    if (listen) unlisten = listen((wake) => done(() => resolve(wake)));
  });
}
