import type { Usage } from '../../../shared/api/index.ts';
import type { Clock } from '../../../shared/clock.ts';
import { isUnreachable, probeDelayMs } from './waiting.ts';
import type { OfflineState } from './waiting.ts';

export interface OfflineWatch {
  /** Since when the service is unreachable and the next probe; null when it is reachable. */
  readonly state: OfflineState | null;
  /**
   * The service could not be reached. Jobs wait for it rather than fail; a probe (GET /usage)
   * asks again after a backoff.
   */
  goOffline(): void;
  /** Asks again now rather than at the next probe ("Submit now"). */
  probeNow(): void;
  dispose(): void;
}

/**
 * Waiting for an unreachable service (docs/workflows.md): the probes and their backoff.
 * `changed` is told whenever every queued job's hold changed (the service went away, came back,
 * or the next probe moved); `back` when it answers again, with its usage when it gave one.
 */
export function createOfflineWatch(deps: {
  getUsage: () => Promise<Usage>;
  clock: Clock;
  probeMs: number;
  probeMaxMs: number;
  disposed: () => boolean;
  changed: () => void;
  back: (usage: Usage | null) => void;
}): OfflineWatch {
  let state: OfflineState | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let probing = false;
  const delay = (failures: number): number => probeDelayMs(failures, deps.probeMs, deps.probeMaxMs);

  function arm(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!state || deps.disposed()) return;
    timer = setTimeout(() => void probe(), Math.max(0, state.nextProbeAt - deps.clock.now()));
    timer.unref?.();
  }

  function backOnline(usage: Usage | null): void {
    if (!state) return;
    state = null;
    if (timer) clearTimeout(timer);
    timer = null;
    deps.back(usage);
  }

  async function probe(): Promise<void> {
    if (!state || deps.disposed() || probing) return;
    probing = true;
    try {
      backOnline(await deps.getUsage());
    } catch (error) {
      if (deps.disposed() || !state) return;
      // Any answer at all (even a refusal) means the service is there: its own errors reach the jobs.
      if (!isUnreachable(error)) return backOnline(null);
      const failures = state.failures + 1;
      state = { ...state, failures, nextProbeAt: deps.clock.now() + delay(failures) };
      arm();
      deps.changed();
    } finally {
      probing = false;
    }
  }

  return {
    get state() {
      return state;
    },
    goOffline() {
      if (deps.disposed() || state) return;
      const now = deps.clock.now();
      state = { since: now, failures: 0, nextProbeAt: now + delay(0) };
      arm();
      deps.changed();
    },
    probeNow() {
      if (!state) return;
      state = { ...state, nextProbeAt: deps.clock.now() };
      arm();
    },
    dispose() {
      if (timer) clearTimeout(timer);
    },
  };
}
