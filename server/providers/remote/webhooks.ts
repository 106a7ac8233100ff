import type { JobStatus, RemoteProviderId } from './contract.ts';

/** What a wait ended with: a webhook about the job (with its status when the body carried one), or time. */
export interface Wake {
  woken: boolean;
  status?: JobStatus;
}

export interface WebhookHubOptions {
  /** A hint (a delivery without a verified status) wakes a job's runner at most once per this. Default 5 000. */
  hintIntervalMs?: number;
  /** The early-delivery buffer's bounds. Defaults 256 entries, 64 KiB of ids, kept 60 s. */
  earlyEntries?: number;
  earlyBytes?: number;
  earlyKeepMs?: number;
}

/** A job this node submitted or resumed and has not finished: what a delivery may wake. */
interface Watched {
  /** The runner's wait, while it waits. */
  wake?: (wake: Wake) => void;
  /** What arrived while the runner was not waiting (it takes it at its next wait). */
  pending?: Wake;
  /** When a hint last woke it, and the wake-up scheduled for the end of the interval. */
  lastHintAt: number;
  hintTimer?: NodeJS.Timeout;
}

/**
 * Connects `POST /v1/provider-webhooks/:provider` to the runner waiting on that job: a delivery
 * wakes the wait at once instead of at the next (slow, safety) poll. What anyone can make it hold
 * is bounded (docs/security.md):
 * - deliveries count only for jobs this node watches (submitted or resumed, not yet finished);
 * - a delivery can beat the submit's answer, so while a submit to the provider is in flight, ids
 *   not yet known are kept in a small buffer, bounded in entries and bytes, oldest dropped first,
 *   each looked up in O(1); without a submit in flight nothing is kept;
 * - a hint (no verified status) wakes a job at most once per hint interval: more are folded into
 *   one wake-up at the interval's end, so forged deliveries cost at most one poll per job per interval.
 */
export class WebhookHub {
  private readonly watched = new Map<string, Watched>();
  /** Insertion-ordered: the oldest is first, so expiry and eviction are O(1) each. */
  private readonly early = new Map<string, number>();
  private earlyBytes = 0;
  private readonly submitting = new Map<RemoteProviderId, number>();
  private readonly hintIntervalMs: number;
  private readonly earlyEntriesMax: number;
  private readonly earlyBytesMax: number;
  private readonly earlyKeepMs: number;

  constructor(options: WebhookHubOptions = {}) {
    this.hintIntervalMs = options.hintIntervalMs ?? 5_000;
    this.earlyEntriesMax = options.earlyEntries ?? 256;
    this.earlyBytesMax = options.earlyBytes ?? 64 * 1024;
    this.earlyKeepMs = options.earlyKeepMs ?? 60_000;
  }

  /**
   * A delivery about a provider job: `status` only from a verified one (applied at once); without
   * it a hint. Returns whether this node watches the job (else the relay may tell the others);
   * the route's answer never depends on it.
   */
  deliver(provider: RemoteProviderId, jobId: string, status?: JobStatus): boolean {
    const slot = slotOf(provider, jobId);
    const job = this.watched.get(slot);
    if (!job) {
      if ((this.submitting.get(provider) ?? 0) > 0) this.keepEarly(slot);
      return false;
    }
    if (status) {
      this.fire(job, { woken: true, status });
      return true;
    }
    if (job.hintTimer) return true;
    const wait = job.lastHintAt + this.hintIntervalMs - Date.now();
    const hint = () => {
      job.hintTimer = undefined;
      job.lastHintAt = Date.now();
      this.fire(job, { woken: true });
    };
    if (wait <= 0) hint();
    else {
      job.hintTimer = setTimeout(hint, wait);
      job.hintTimer.unref();
    }
    return true;
  }

  /**
   * Marks a submit to `provider` as in flight until the returned function is called: deliveries
   * for ids not yet known are kept meanwhile (a provider may deliver before its submit answers).
   */
  submitStarted(provider: RemoteProviderId): () => void {
    this.submitting.set(provider, (this.submitting.get(provider) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.submitting.get(provider) ?? 1) - 1;
      if (left <= 0) this.submitting.delete(provider);
      else this.submitting.set(provider, left);
    };
  }

  /**
   * Watches a job from its submit's answer (or its resumption) to its end: deliveries about it
   * wake its runner. A delivery kept while the submit was in flight counts as a hint now.
   * Returns how to stop watching.
   */
  watch(provider: RemoteProviderId, jobId: string): () => void {
    const slot = slotOf(provider, jobId);
    const job: Watched = { lastHintAt: 0 };
    this.watched.set(slot, job);
    if (this.takeEarly(slot)) {
      job.lastHintAt = Date.now();
      job.pending = { woken: true };
    }
    return () => {
      clearTimeout(job.hintTimer);
      if (this.watched.get(slot) === job) this.watched.delete(slot);
    };
  }

  /**
   * Waits up to `ms` for a delivery about a watched job; resolves early on one (or at once when
   * one came since the last wait), and rejects when `signal` aborts.
   */
  sleep(provider: RemoteProviderId, jobId: string, ms: number, signal: AbortSignal): Promise<Wake> {
    const job = this.watched.get(slotOf(provider, jobId));
    if (job?.pending) {
      const pending = job.pending;
      job.pending = undefined;
      return Promise.resolve(pending);
    }
    if (!job) return sleep(ms, signal);
    return sleep(ms, signal, (wake) => {
      job.wake = wake;
      return () => {
        if (job.wake === wake) job.wake = undefined;
      };
    });
  }

  /**
   * Wakes every wait without a status, so each runner polls its job now: deliveries may have been
   * missed (the relay between nodes was disconnected), and one poll each beats the safety poll.
   */
  wakeAll(): void {
    for (const job of [...this.watched.values()]) job.wake?.({ woken: true });
  }

  /** Entries in the early buffer (tests: it stays bounded). */
  get earlySize(): number {
    return this.early.size;
  }

  private fire(job: Watched, wake: Wake): void {
    if (job.wake) job.wake(wake);
    // A status outranks a hint; either is taken at the runner's next wait.
    else if (!job.pending?.status) job.pending = wake;
  }

  private keepEarly(slot: string): void {
    const now = Date.now();
    this.dropEarly((at) => at + this.earlyKeepMs < now);
    if (this.early.has(slot)) return;
    this.early.set(slot, now);
    this.earlyBytes += earlyCost(slot);
    this.dropEarly(() => this.early.size > this.earlyEntriesMax || this.earlyBytes > this.earlyBytesMax);
  }

  private takeEarly(slot: string): boolean {
    const at = this.early.get(slot);
    if (at === undefined) return false;
    this.early.delete(slot);
    this.earlyBytes -= earlyCost(slot);
    return at + this.earlyKeepMs >= Date.now();
  }

  /** Drops the oldest entries while `drop` says so. */
  private dropEarly(drop: (at: number) => boolean): void {
    for (const [slot, at] of this.early) {
      if (!drop(at)) return;
      this.early.delete(slot);
      this.earlyBytes -= earlyCost(slot);
    }
  }
}

function slotOf(provider: RemoteProviderId, jobId: string): string {
  return `${provider}\u0000${jobId}`;
}

/** What an early entry holds: its key (two bytes a character) and the map's own share. */
function earlyCost(slot: string): number {
  return slot.length * 2 + 64;
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
