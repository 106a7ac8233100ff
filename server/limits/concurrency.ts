import { randomUUID } from 'node:crypto';
import type { MediaKind } from '../../shared/api/index.ts';
import type { Db } from '../storage/db.ts';
import { lockKey } from '../storage/sql/dialect.ts';
import { LeasedRows } from './leased-rows.ts';

/**
 * When a running generation ends is not known ahead; these are typical Local-engine render times,
 * so a client told to retry after one usually finds its slot (or its reservation) released.
 */
export const TYPICAL_RENDER_SECONDS: Readonly<Record<MediaKind, number>> = { video: 3, image: 1 };

/**
 * Where slots are held when several nodes share a database: a slot is a row (running_slots) with a
 * lease its node renews while the generation runs (leased-rows.ts), so a node that dies, or a
 * release the database missed, frees its slot when the lease lapses (SLOT_LEASE_MS), and every
 * node counts the same generations.
 */
export interface SlotStore {
  /** Holds a slot unless `limit` are held (by any node): its id, or null. Atomic. */
  hold(user: string, kind: MediaKind, limit: number): Promise<string | null>;
  /**
   * Lets go of a slot: no longer renewed from now on, deleted now or, when the database cannot be
   * reached, by retries until its lease lapses; `onFirstError` hears of the first failure.
   */
  release(id: string, onFirstError?: (error: unknown) => void): Promise<void>;
  /** Slots of `user` and `kind` held now, by every node. */
  count(user: string, kind: MediaKind): Promise<number>;
  /** Stops renewing and lets go of this node's slots (the service is closing). */
  close(): Promise<void>;
}

export { SLOT_LEASE_MS } from './leased-rows.ts';
/** How often a generation waiting for a slot held by another node looks again. */
const REMOTE_WAKE_MS = 500;

/**
 * running_slots (SQLite version 8, PostgreSQL version 4). `hold` runs in a transaction that first
 * serializes holders of the same user and kind (sql/dialect.ts lockKey: SQLite's write lock, a
 * PostgreSQL advisory lock), drops lapsed leases, counts and inserts. Leases are wall-clock time,
 * never the service's (test) clock.
 */
export function databaseSlotStore(db: Db, now: () => number = Date.now): SlotStore {
  const rows = new LeasedRows(db, 'running_slots', randomUUID(), now);
  return {
    async hold(user, kind, limit) {
      const id = await db.transaction(async (tx) => {
        await lockKey(tx, `running_slots/${kind}/${user}`);
        const at = now();
        await tx.run('DELETE FROM running_slots WHERE user_id = ? AND kind = ? AND lease_until <= ?', user, kind, at);
        const held = await tx.get<{ n: number }>(
          'SELECT count(*) AS n FROM running_slots WHERE user_id = ? AND kind = ?',
          user,
          kind,
        );
        if ((held?.n ?? 0) >= limit) return null;
        const slot = randomUUID();
        await tx.run(
          'INSERT INTO running_slots (id, user_id, kind, node, lease_until) VALUES (?, ?, ?, ?, ?)',
          slot,
          user,
          kind,
          rows.node,
          rows.leaseUntil(),
        );
        return slot;
      });
      if (id !== null) rows.add(id);
      return id;
    },
    release(id, onFirstError) {
      return rows.release(id, onFirstError);
    },
    async count(user, kind) {
      const row = await db.get<{ n: number }>(
        'SELECT count(*) AS n FROM running_slots WHERE user_id = ? AND kind = ? AND lease_until > ?',
        user,
        kind,
        now(),
      );
      return row?.n ?? 0;
    },
    close() {
      return rows.close();
    },
  };
}

/**
 * Generations running at once, per user and media kind, plus the highest count this node has
 * observed: the app's job-queue tests read that to prove the queue never exceeded the tier. With a
 * SlotStore (the service) the limit counts every node's generations; without one (unit tests),
 * this process's.
 */
export class ConcurrencyLimiter {
  private readonly running = new Map<string, number>();
  private readonly highest = new Map<string, number>();
  /** Asynchronous generations waiting for a slot, woken (to try again) when one is released. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly store: SlotStore | null;
  private readonly onReleaseError: (error: unknown) => void;

  constructor(store: SlotStore | null = null, onReleaseError: (error: unknown) => void = () => undefined) {
    this.store = store;
    this.onReleaseError = onReleaseError;
  }

  /** Takes a slot, or resolves null when `limit` are already running. The release is idempotent. */
  async tryAcquire(user: string, kind: MediaKind, limit: number): Promise<(() => void) | null> {
    const key = `${kind}\u0000${user}`;
    const now = this.running.get(key) ?? 0;
    if (now >= limit) return null;
    const held = this.store ? await this.store.hold(user, kind, limit) : '';
    if (held === null) return null;
    const local = (this.running.get(key) ?? 0) + 1;
    this.running.set(key, local);
    if (local > (this.highest.get(key) ?? 0)) this.highest.set(key, local);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(key) ?? 1) - 1;
      if (left <= 0) this.running.delete(key);
      else this.running.set(key, left);
      const wake = () => {
        const waiting = this.waiters.get(key);
        if (waiting) {
          this.waiters.delete(key);
          for (const w of waiting) w();
        }
      };
      if (!this.store) return wake();
      void this.store.release(held, this.onReleaseError).finally(wake);
    };
  }

  /**
   * Takes a slot, waiting (asynchronous generations: `queued`) until one of `user` and `kind` is
   * released when `limit` run. Rejects when `signal` aborts. `onWait` is called (once) when no slot
   * was free at first: whatever the caller read before may be stale by the time it gets one.
   */
  async acquire(
    user: string,
    kind: MediaKind,
    limit: number,
    signal: AbortSignal,
    onWait?: () => void,
  ): Promise<() => void> {
    const key = `${kind}\u0000${user}`;
    let waited = false;
    for (;;) {
      signal.throwIfAborted();
      const slot = await this.tryAcquire(user, kind, limit);
      if (slot) return slot;
      signal.throwIfAborted();
      if (!waited) onWait?.();
      waited = true;
      await new Promise<void>((resolve, reject) => {
        let set = this.waiters.get(key);
        if (!set) {
          set = new Set();
          this.waiters.set(key, set);
        }
        const waiters = set;
        const onAbort = () => {
          if (poll) clearTimeout(poll);
          waiters.delete(wake);
          reject(signal.reason as Error);
        };
        // Another node's slot is released there: with a store, look again now and then too.
        const poll = this.store ? setTimeout(() => wake(), REMOTE_WAKE_MS) : null;
        const wake = () => {
          if (poll) clearTimeout(poll);
          waiters.delete(wake);
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        waiters.add(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  /** Generations of `user` and `kind` running on this node. */
  count(user: string, kind: MediaKind): number {
    return this.running.get(`${kind}\u0000${user}`) ?? 0;
  }

  /** Generations of `user` and `kind` running on every node (GET /usage). */
  held(user: string, kind: MediaKind): Promise<number> {
    return this.store ? this.store.count(user, kind) : Promise.resolve(this.count(user, kind));
  }

  /** Lets go of this node's slots in the store (the service is closing). */
  async close(): Promise<void> {
    await this.store?.close();
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
