import { sha256Hex } from '../../shared/node/hash.ts';
import type { AuthenticatedKey } from '../auth/api-keys.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Db } from '../storage/db.ts';
import { ApiError } from '../errors.ts';
import type { GenerationOperation } from '../storage/generations.ts';

/** How long a stored result answers repeats (then the key may be reused). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

const KEY = /^[\x21-\x7e]{1,255}$/;
/** Requests running now, by user and key; `resumed` marks a generation resumed after a restart. */
type Running = Map<string, { fingerprint: string; result: Promise<unknown>; resumed?: boolean }>;

/**
 * Writes the idempotency record. `run` calls it inside the transaction that commits its result
 * (the media rows and their charge), so no crash can leave one without the other.
 */
export interface RecordResult<T> {
  /** `db`: the handle of the transaction that commits the result, so both land together. */
  (body: T, db: Db): Promise<void>;
  /** The request's key and fingerprint: a remote provider job keeps them, to record its result after a restart. */
  readonly key: string;
  readonly fingerprint: string;
}

/**
 * The endpoint a generation operation's requests are fingerprinted under, synchronous or
 * asynchronous alike: one key space, so a key used in both modes names one request (docs/api.md).
 */
export function idempotencyEndpoint(operation: GenerationOperation): string {
  return operation === 'videos.generations' ? 'videos' : operation === 'images.generations' ? 'images' : operation;
}

/**
 * Whether a fingerprint a generation row holds is this request's: today's, or the one builds before
 * the one key space gave asynchronous requests (`async <operation>`), so those repeat as before.
 */
export function sameRequest(
  stored: string | null,
  request: { key: string; operation: GenerationOperation; raw: unknown },
): boolean {
  const { key, operation, raw } = request;
  return (
    stored === idempotencyFingerprint(key, idempotencyEndpoint(operation), raw) ||
    stored === idempotencyFingerprint(key, `async ${operation}`, raw)
  );
}

/** Checks an Idempotency-Key and fingerprints the request it came with (the endpoint and the body). */
export function idempotencyFingerprint(key: string, endpoint: string, raw: unknown): string {
  if (!KEY.test(key))
    throw new ApiError('invalid_request_error', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  // `raw` is a JSON body already bounded in depth (http/body.ts), so this cannot recurse too far.
  return sha256Hex(`${endpoint}\n${JSON.stringify(raw)}`);
}

/**
 * The key's result was recorded meanwhile by another run of the same request (another node, while
 * this one was slow): this one's transaction rolls back, its items and charge with it, and the
 * caller answers with the recorded result.
 */
export class AlreadyRecorded extends Error {
  constructor() {
    super('the Idempotency-Key already has a result');
    this.name = 'AlreadyRecorded';
  }
}

/**
 * Stores a result for repeats of (user, key); runs inside the transaction that commits it. Only
 * an expired record is replaced: a live one means the request was answered already (a retry on
 * another node), and this commit throws AlreadyRecorded rather than charge a second time.
 */
export async function recordIdempotent(
  db: Db,
  now: number,
  user: string,
  idempotency: { key: string; fingerprint: string },
  body: unknown,
): Promise<void> {
  const { key, fingerprint } = idempotency;
  const changed = await db.run(
    `INSERT INTO idempotency (user_id, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, 200, ?, ?)
     ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status,
       body = excluded.body, created_at = excluded.created_at WHERE idempotency.created_at <= ?`,
    user,
    key,
    fingerprint,
    JSON.stringify(body),
    now,
    now - IDEMPOTENCY_TTL_MS,
  );
  if (Number(changed.changes) === 0) throw new AlreadyRecorded();
}

/**
 * The result recorded for (user, key) within the idempotency window, if any; the key used with
 * another request is a 400.
 */
export async function storedResult<T>(
  db: Db,
  now: number,
  user: string,
  idempotency: { key: string; fingerprint: string },
): Promise<T | undefined> {
  const stored = await db.get<{ fingerprint: string; body: string; created_at: number }>(
    'SELECT fingerprint, body, created_at FROM idempotency WHERE user_id = ? AND key = ?',
    user,
    idempotency.key,
  );
  if (!stored || stored.created_at + IDEMPOTENCY_TTL_MS <= now) return undefined;
  if (stored.fingerprint !== idempotency.fingerprint) throw mismatchError();
  return JSON.parse(stored.body) as T;
}

/** A key used again with another request. */
export function mismatchError(): ApiError {
  return new ApiError('invalid_request_error', 'Idempotency-Key was already used with a different request');
}

/**
 * What one running service keeps about Idempotency-Keys in this process: the requests running now
 * by (user, key), and each key's turn. The Generations object (generations.ts) holds one.
 */
export class IdempotencyKeys {
  private readonly running: Running = new Map();
  private readonly turns = new Map<string, Promise<unknown>>();
  private readonly db: Db;
  private readonly clock: Clock;

  constructor(db: Db, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  /**
   * A synchronous request with this key running in this process now (SQLite: in its request), for a
   * request in the other mode to wait for; undefined when there is none. Another request's key is a 400.
   */
  runningResult(user: string, idempotency: { key: string; fingerprint: string }): Promise<unknown> | undefined {
    const current = this.running.get(`${user}\u0000${idempotency.key}`);
    if (current && current.fingerprint !== idempotency.fingerprint) throw mismatchError();
    return current?.result;
  }

  /**
   * Runs `step` alone among this process's steps for (user, key): a synchronous request's look for
   * an asynchronous generation with its key, and an asynchronous request's look for a running
   * synchronous one and its insert, so that two requests in the two modes never both miss each
   * other (docs/api.md). Keep steps short: never wait for a generation inside one.
   */
  async keyTurn<T>(user: string, key: string, step: () => Promise<T>): Promise<T> {
    const map = this.turns;
    const slot = `${user}\u0000${key}`;
    const before = map.get(slot) ?? Promise.resolve();
    const mine = before.then(step, step);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    map.set(slot, settled);
    try {
      return await mine;
    } finally {
      if (map.get(slot) === settled) map.delete(slot);
    }
  }

  /**
   * A generation resumed after a restart (a remote provider job) answers repeats of its request:
   * one that arrives while it runs waits for it rather than submitting again. Should it fail,
   * nothing was stored or charged, and the waiting repeat runs afresh.
   */
  awaitResumed(user: string, idempotency: { key: string; fingerprint: string }, result: Promise<unknown>): void {
    const slot = `${user}\u0000${idempotency.key}`;
    const map = this.running;
    map.set(slot, { fingerprint: idempotency.fingerprint, result, resumed: true });
    const clear = () => {
      if (map.get(slot)?.result === result) map.delete(slot);
    };
    result.then(clear, clear);
  }

  /**
   * `Idempotency-Key`: the first successful result is stored and every repeat with the same key and
   * body gets it back (and is not charged again), also after a crash and restart. A repeat that
   * arrives while the first is still running waits for it. Failures are not stored, so a failed
   * request can be retried with the key.
   */
  async withIdempotency<T>(
    auth: AuthenticatedKey,
    endpoint: string,
    key: string | undefined,
    raw: unknown,
    run: (record: RecordResult<T> | undefined) => Promise<T>,
  ): Promise<{ body: T; replayed: boolean }> {
    if (key === undefined) return { body: await run(undefined), replayed: false };
    const fingerprint = idempotencyFingerprint(key, endpoint, raw);

    const stored = await storedResult<T>(this.db, this.clock.now(), auth.user, { key, fingerprint });
    if (stored !== undefined) return { body: stored, replayed: true };

    const map = this.running;
    const slot = `${auth.user}\u0000${key}`;
    const current = map.get(slot);
    if (current) {
      if (current.fingerprint !== fingerprint) throw mismatchError();
      if (!current.resumed) return { body: (await current.result) as T, replayed: true };
      const resumed = await current.result.then(
        (body) => ({ body: body as T }),
        () => null,
      );
      if (resumed) return { body: resumed.body, replayed: true };
      // The resumed job failed (nothing stored or charged): this request runs afresh.
      if (map.get(slot)) return this.withIdempotency(auth, endpoint, key, raw, run);
    }
    let recorded = false;
    const record: RecordResult<T> = Object.assign(
      async (body: T, db: Db) => {
        await recordIdempotent(db, this.clock.now(), auth.user, { key, fingerprint }, body);
        recorded = true;
      },
      { key, fingerprint },
    );
    const result = run(record);
    map.set(slot, { fingerprint, result });
    try {
      const body = await result;
      // A result committed without a transaction of its own (nothing stored) is recorded now.
      if (!recorded) await record(body, this.db);
      return { body, replayed: false };
    } catch (error) {
      if (!(error instanceof AlreadyRecorded)) throw error;
      // Another node answered this request first: its result, never a second charge.
      const first = await this.db.get<{ body: string }>(
        'SELECT body FROM idempotency WHERE user_id = ? AND key = ?',
        auth.user,
        key,
      );
      if (!first) throw error;
      return { body: JSON.parse(first.body) as T, replayed: true };
    } finally {
      if (map.get(slot)?.result === result) map.delete(slot);
    }
  }
}
