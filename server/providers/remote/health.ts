import type { Sql } from '../../storage/sql/types.ts';
import type { ProviderError, ProviderErrorClass, ProviderHealth } from './contract.ts';

export interface HealthOptions {
  /** Failures in a row after which routing skips the provider for `cooldownMs`. Default 3. */
  failuresBeforeCooldown?: number;
  /** Default 60 000. */
  cooldownMs?: number;
  /** Default Date.now. */
  now?: () => number;
  /**
   * The PostgreSQL database the nodes share: each outcome is written to its `provider_health`
   * table and `refresh()` reads it back. Without it (SQLite, one node) the tracker is memory only.
   */
  db?: Sql;
  /** Applied to a failure's message before it is kept (keys never reach the table). */
  redact?: (message: string) => string;
  /** Where a failed write or read of the table is reported (never thrown into a generation). */
  log?: (message: string) => void;
}

/**
 * Classes that say nothing about the provider's health: the request's own fault (the provider
 * answered, and correctly). They neither count as a failure nor clear one.
 */
const NEUTRAL: ReadonlySet<ProviderErrorClass> = new Set(['content_policy', 'invalid_input', 'canceled', 'expired']);

/** A `provider_health` row (schema-v9.sql). */
interface Row {
  provider: string;
  failures: number;
  since: number;
  last_class: ProviderErrorClass;
  last_message: string;
  last_at: number;
  cooldown_until: number | null;
}

interface State {
  failures: number;
  since?: number;
  last?: { class: ProviderErrorClass; message: string; at: number };
  cooldownUntil?: number;
}

/**
 * Each remote provider's health, from the outcomes of its jobs (GET /providers `status`): ok
 * after a success, unhealthy after a failure (since the first of the failures in a row). A
 * refused key, or `failuresBeforeCooldown` failures in a row, put it in a cooldown during which
 * routing skips it; the first success after clears everything.
 *
 * The methods answer from memory. On PostgreSQL every node of the service must see the same health
 * (requests alternate between nodes: the node that saw a key refused is not the one asked next), so
 * each outcome is also written to the shared `provider_health` table, the failures counted there
 * by an increment so that those of several nodes add up, and `refresh()` replaces the memory with
 * the table (one SELECT of a few rows) before routing decides and before GET /providers answers.
 * On SQLite (one node) it is memory only: a restart starts afresh.
 */
export class ProviderHealthTracker {
  private readonly states = new Map<string, State>();
  private readonly threshold: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;
  private readonly db: Sql | undefined;
  private readonly log: (message: string) => void;
  private readonly redact: (message: string) => string;

  constructor(opts: HealthOptions = {}) {
    this.threshold = opts.failuresBeforeCooldown ?? 3;
    this.cooldownMs = opts.cooldownMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.db = opts.db;
    this.log = opts.log ?? (() => undefined);
    this.redact = opts.redact ?? ((m) => m);
  }

  /** Memory at once; the shared table by the time the promise settles (it never rejects). */
  success(provider: string): Promise<void> {
    return this.clear(provider);
  }

  /** Memory at once; the shared table by the time the promise settles (it never rejects). */
  failure(provider: string, error: ProviderError): Promise<void> {
    if (NEUTRAL.has(error.errorClass)) return Promise.resolve();
    const at = this.now();
    const state = this.states.get(provider) ?? { failures: 0 };
    state.failures++;
    state.since ??= at;
    const message = this.redact(error.message);
    state.last = { class: error.errorClass, message, at };
    // A refused key fails every request until it is changed: no point trying it twice.
    const refused = error.errorClass === 'auth';
    if (refused || state.failures >= this.threshold) state.cooldownUntil = at + this.cooldownMs;
    this.states.set(provider, state);
    const db = this.db;
    if (!db) return Promise.resolve();
    // One statement: the count is the table's (another node's failures add up with ours), and the
    // cooldown starts in the same step on the rule above (a refused key, or the threshold reached).
    return db
      .get<Row>(
        `INSERT INTO provider_health (provider, failures, since, last_class, last_message, last_at, cooldown_until)
         VALUES (?, 1, ?, ?, ?, ?, ?)
         ON CONFLICT (provider) DO UPDATE SET
           failures = provider_health.failures + 1,
           last_class = EXCLUDED.last_class,
           last_message = EXCLUDED.last_message,
           last_at = EXCLUDED.last_at,
           cooldown_until = CASE WHEN EXCLUDED.last_class = 'auth' OR provider_health.failures + 1 >= ? THEN EXCLUDED.last_at + ?
             ELSE provider_health.cooldown_until END
         RETURNING provider, failures, since, last_class, last_message, last_at, cooldown_until`,
        provider,
        at,
        error.errorClass,
        message,
        at,
        refused || 1 >= this.threshold ? at + this.cooldownMs : null,
        this.threshold,
        this.cooldownMs,
      )
      .then(
        (row) => {
          if (row) this.states.set(provider, stateOf(row));
        },
        (e: unknown) => this.log(`could not record ${provider}'s failure in provider_health: ${describe(e)}`),
      );
  }

  /** Forget the provider's failures (its key was changed). */
  reset(provider: string): Promise<void> {
    return this.clear(provider);
  }

  /** Replaces the memory with the shared table (PostgreSQL); nothing to do on memory only. */
  async refresh(): Promise<void> {
    if (!this.db) return;
    try {
      const rows = await this.db.all<Row>(
        'SELECT provider, failures, since, last_class, last_message, last_at, cooldown_until FROM provider_health',
      );
      this.states.clear();
      for (const row of rows) this.states.set(row.provider, stateOf(row));
    } catch (e) {
      // What this node last knew still routes: a health view a little stale beats a failed request.
      this.log(`could not read provider_health (routing uses this node's view): ${describe(e)}`);
    }
  }

  private clear(provider: string): Promise<void> {
    this.states.delete(provider);
    if (!this.db) return Promise.resolve();
    return this.db.run('DELETE FROM provider_health WHERE provider = ?', provider).then(
      () => undefined,
      (e: unknown) => this.log(`could not clear ${provider}'s row of provider_health: ${describe(e)}`),
    );
  }

  /** Whether routing should skip the provider now. */
  inCooldown(provider: string): boolean {
    const until = this.states.get(provider)?.cooldownUntil;
    return until !== undefined && until > this.now();
  }

  health(provider: string): ProviderHealth {
    const state = this.states.get(provider);
    if (!state?.last) return { status: 'ok' };
    const iso = (ms: number) => new Date(ms).toISOString();
    const health: ProviderHealth = {
      status: 'unhealthy',
      lastError: { class: state.last.class, message: state.last.message, at: iso(state.last.at) },
      since: iso(state.since ?? state.last.at),
    };
    if (state.cooldownUntil !== undefined && state.cooldownUntil > this.now())
      health.cooldownUntil = iso(state.cooldownUntil);
    return health;
  }
}

function stateOf(row: Row): State {
  return {
    failures: row.failures,
    since: row.since,
    last: { class: row.last_class, message: row.last_message, at: row.last_at },
    ...(row.cooldown_until !== null ? { cooldownUntil: row.cooldown_until } : {}),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
