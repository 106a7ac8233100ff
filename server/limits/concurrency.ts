import type { MediaKind } from '../../shared/api/index.ts';

/**
 * When a running generation ends is not known ahead; these are typical Local-engine render times,
 * so a client told to retry after one usually finds its slot (or its reservation) released.
 */
export const TYPICAL_RENDER_SECONDS: Readonly<Record<MediaKind, number>> = { video: 3, image: 1 };

/**
 * Generations running at once, per user and media kind, plus the highest count ever observed:
 * the app's job-queue tests read that to prove the queue never exceeded the tier.
 */
export class ConcurrencyLimiter {
  private readonly running = new Map<string, number>();
  private readonly highest = new Map<string, number>();
  /** Asynchronous generations waiting for a slot, woken (to try again) when one is released. */
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Takes a slot, or returns null when `limit` are already running. The release is idempotent. */
  tryAcquire(user: string, kind: MediaKind, limit: number): (() => void) | null {
    const key = `${kind}\u0000${user}`;
    const now = this.running.get(key) ?? 0;
    if (now >= limit) return null;
    this.running.set(key, now + 1);
    if (now + 1 > (this.highest.get(key) ?? 0)) this.highest.set(key, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left <= 0) this.running.delete(key);
      else this.running.set(key, left);
      const waiting = this.waiters.get(key);
      if (waiting) {
        this.waiters.delete(key);
        for (const wake of waiting) wake();
      }
    };
  }

  /**
   * Takes a slot, waiting (asynchronous generations: `queued`) until one of `user` and `kind` is
   * released when `limit` run. Rejects when `signal` aborts.
   */
  async acquire(user: string, kind: MediaKind, limit: number, signal: AbortSignal): Promise<() => void> {
    const key = `${kind}\u0000${user}`;
    for (;;) {
      signal.throwIfAborted();
      const slot = this.tryAcquire(user, kind, limit);
      if (slot) return slot;
      await new Promise<void>((resolve, reject) => {
        let set = this.waiters.get(key);
        if (!set) {
          set = new Set();
          this.waiters.set(key, set);
        }
        const waiters = set;
        const onAbort = () => {
          waiters.delete(wake);
          reject(signal.reason as Error);
        };
        const wake = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        waiters.add(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  count(user: string, kind: MediaKind): number {
    return this.running.get(`${kind}\u0000${user}`) ?? 0;
  }

  maxObserved(user: string, kind: MediaKind): number {
    return this.highest.get(`${kind}\u0000${user}`) ?? 0;
  }

  /** Every user and kind seen so far with its highest concurrent count. */
  snapshot(): Array<{ user: string; kind: MediaKind; max: number }> {
    return [...this.highest].map(([key, max]) => {
      const [kind = '', user = ''] = key.split('\u0000');
      return { user, kind: kind as MediaKind, max };
    });
  }
}
