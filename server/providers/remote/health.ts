import type { ProviderError, ProviderErrorClass, ProviderHealth } from './contract.ts';

export interface HealthOptions {
  /** Failures in a row after which routing skips the provider for `cooldownMs`. Default 3. */
  failuresBeforeCooldown?: number;
  /** Default 60 000. */
  cooldownMs?: number;
  /** Default Date.now. */
  now?: () => number;
}

/**
 * Classes that say nothing about the provider's health: the request's own fault (the provider
 * answered, and correctly). They neither count as a failure nor clear one.
 */
const NEUTRAL: ReadonlySet<ProviderErrorClass> = new Set(['content_policy', 'invalid_input', 'canceled']);

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
 * routing skips it; the first success after clears everything. In memory: a restart starts afresh.
 */
export class ProviderHealthTracker {
  private readonly states = new Map<string, State>();
  private readonly threshold: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(opts: HealthOptions = {}) {
    this.threshold = opts.failuresBeforeCooldown ?? 3;
    this.cooldownMs = opts.cooldownMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  success(provider: string): void {
    this.states.delete(provider);
  }

  failure(provider: string, error: ProviderError): void {
    if (NEUTRAL.has(error.errorClass)) return;
    const at = this.now();
    const state = this.states.get(provider) ?? { failures: 0 };
    state.failures++;
    state.since ??= at;
    state.last = { class: error.errorClass, message: error.message, at };
    // A refused key fails every request until it is changed: no point trying it twice.
    if (error.errorClass === 'auth' || state.failures >= this.threshold) state.cooldownUntil = at + this.cooldownMs;
    this.states.set(provider, state);
  }

  /** Forget the provider's failures (its key was changed). */
  reset(provider: string): void {
    this.states.delete(provider);
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
