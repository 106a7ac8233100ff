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
    };
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
