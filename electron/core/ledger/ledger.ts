import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Migration } from '../../../shared/node/migrations.ts';
import { migrate } from '../../../shared/node/migrations.ts';

/**
 * What one job was charged, as the app saw it in the generation's response. The ledger is the
 * app's own record, kept apart from the job journal: a job removed from the queue (or retried)
 * stays charged here, and `GET /usage` is checked against it (reconcile.ts).
 */
export interface Charge {
  jobId: string;
  profileId: string;
  /**
   * The last 4 characters of the API key that submitted the job (the service charges that key,
   * whatever key the app holds when the result arrives): what `/usage` names a key by (its
   * `byKey[].last4`), and all the app may keep of a key. Null when it was not known.
   */
  key: string | null;
  /** The UTC day of the charge (YYYY-MM-DD): the day the service created the items. */
  day: string;
  itemIds: string[];
  /** USD, for all the job's items. */
  price: number;
  /** True once every item is saved on this machine. */
  delivered: boolean;
  /** Epoch ms when the app recorded it. */
  chargedAt: number;
}

export type NewCharge = Omit<Charge, 'chargedAt' | 'delivered'> & { delivered?: boolean };

export interface Ledger {
  /**
   * Records a job's charge, or updates it (a recovered job's items): one row per job, so a
   * repeated record never charges twice. `delivered` only ever goes from false to true.
   */
  record(charge: NewCharge): Charge;
  markDelivered(jobId: string): void;
  /**
   * A job was sent to the service (its `attempt`-th submit) with the key ending `key`. The first
   * note of an attempt stands: a job resumed after a restart polls with another key, but its
   * charge stays with the key that submitted it.
   */
  noteSubmit(submit: { jobId: string; profileId: string; attempt: number; key: string; at: number }): void;
  /** The key of a job's latest submit, or null when none was noted. */
  submitKey(jobId: string): string | null;
  /** Every key a profile's jobs were submitted or charged with: the app's keys of the account. */
  keys(profileId: string): string[];
  get(jobId: string): Charge | null;
  /** A profile's charges, oldest first. */
  all(profileId: string): Charge[];
  /** USD charged to a profile on the days from `fromDay` to `toDay` (inclusive, YYYY-MM-DD). */
  spent(profileId: string, fromDay: string, toDay: string): number;
  close(): void;
}

const LEDGER_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'charges',
    up: (db) =>
      db.exec(`
        CREATE TABLE charges (
          job_id TEXT PRIMARY KEY,
          profile_id TEXT NOT NULL,
          key TEXT,
          day TEXT NOT NULL,
          item_ids TEXT NOT NULL,
          price REAL NOT NULL,
          delivered INTEGER NOT NULL DEFAULT 0,
          charged_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL
        );
        CREATE INDEX charges_profile_day ON charges (profile_id, day);
      `),
  },
  {
    version: 2,
    name: 'submissions',
    // Which key sent each submit of a job (last 4 characters only, as `charges.key`).
    up: (db) =>
      db.exec(`
        CREATE TABLE submissions (
          job_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          profile_id TEXT NOT NULL,
          key TEXT NOT NULL,
          submitted_at INTEGER NOT NULL,
          PRIMARY KEY (job_id, attempt)
        );
        CREATE INDEX submissions_profile ON submissions (profile_id);
      `),
  },
];

interface Row {
  job_id: string;
  profile_id: string;
  key: string | null;
  day: string;
  item_ids: string;
  price: number;
  delivered: number;
  charged_at: number;
}

const toCharge = (r: Row): Charge => ({
  jobId: r.job_id,
  profileId: r.profile_id,
  key: r.key,
  day: r.day,
  itemIds: JSON.parse(r.item_ids) as string[],
  price: r.price,
  delivered: r.delivered === 1,
  chargedAt: r.charged_at,
});

/** Cents are what a creator reads; sums of floats are rounded to a millionth so they compare. */
export const roundUsd = (n: number): number => Math.round(n * 1e6) / 1e6;

/** What items cost by their own prices (each carries its charge); null when one does not say. */
export function itemsCharge(items: ReadonlyArray<{ price?: number | undefined }>): number | null {
  if (items.length === 0) return null;
  let sum = 0;
  for (const i of items) {
    if (typeof i.price !== 'number') return null;
    sum += i.price;
  }
  return roundUsd(sum);
}

/** The UTC day (YYYY-MM-DD) of an epoch ms or an ISO time. */
export function utcDay(at: number | string): string {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  return new Date(Number.isFinite(ms) ? ms : 0).toISOString().slice(0, 10);
}

/**
 * The ledger in SQLite (its own file beside the job journal). Every write is one statement, so
 * one transaction, with `synchronous = FULL`: a kill mid-write leaves the charge recorded or not,
 * never half; a charge the kill lost is recorded again from the journal at the next start.
 */
export function createLedger({ db, now }: { db: DatabaseSync; now: () => number }): Ledger {
  db.exec('PRAGMA synchronous = FULL');
  migrate(db, 'the ledger', LEDGER_MIGRATIONS);
  const cache = new Map<string, StatementSync>();
  const stmt = (sql: string): StatementSync => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const get = (jobId: string): Charge | null => {
    const row = stmt('SELECT * FROM charges WHERE job_id = ?').get(jobId) as Row | undefined;
    return row ? toCharge(row) : null;
  };
  return {
    record(c) {
      const at = now();
      stmt(
        `INSERT INTO charges (job_id, profile_id, key, day, item_ids, price, delivered, charged_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (job_id) DO UPDATE SET
           key = coalesce(excluded.key, key), day = excluded.day, item_ids = excluded.item_ids,
           price = excluded.price, delivered = max(delivered, excluded.delivered), updated_at = excluded.updated_at`,
      ).run(
        c.jobId,
        c.profileId,
        c.key,
        c.day,
        JSON.stringify(c.itemIds),
        roundUsd(c.price),
        c.delivered ? 1 : 0,
        at,
        at,
      );
      return get(c.jobId)!;
    },
    markDelivered(jobId) {
      stmt('UPDATE charges SET delivered = 1, updated_at = ? WHERE job_id = ? AND delivered = 0').run(now(), jobId);
    },
    noteSubmit(n) {
      stmt(
        `INSERT INTO submissions (job_id, attempt, profile_id, key, submitted_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (job_id, attempt) DO NOTHING`,
      ).run(n.jobId, n.attempt, n.profileId, n.key, n.at);
    },
    submitKey(jobId) {
      const row = stmt('SELECT key FROM submissions WHERE job_id = ? ORDER BY attempt DESC LIMIT 1').get(jobId) as
        { key: string } | undefined;
      return row?.key ?? null;
    },
    keys(profileId) {
      const rows = stmt(
        `SELECT key FROM submissions WHERE profile_id = ?
         UNION SELECT key FROM charges WHERE profile_id = ? AND key IS NOT NULL ORDER BY key`,
      ).all(profileId, profileId) as Array<{ key: string }>;
      return rows.map((r) => r.key);
    },
    get,
    all(profileId) {
      return (
        stmt('SELECT * FROM charges WHERE profile_id = ? ORDER BY charged_at, job_id').all(
          profileId,
        ) as unknown as Row[]
      ).map(toCharge);
    },
    spent(profileId, fromDay, toDay) {
      const row = stmt(
        'SELECT coalesce(sum(price), 0) AS n FROM charges WHERE profile_id = ? AND day >= ? AND day <= ?',
      ).get(profileId, fromDay, toDay) as { n: number };
      return roundUsd(row.n);
    },
    close() {
      db.close();
    },
  };
}
