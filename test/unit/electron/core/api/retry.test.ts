import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, RetryBudget, retrying, takeBackoff } from '../../../../../electron/core/api/retry.ts';
import type { RetryDeps, WaitNotice } from '../../../../../electron/core/api/retry.ts';

/**
 * The one retry layer (docs/architecture.md, "One retry budget"): every wait before a try is
 * taken from one budget, is told before it starts, and the waits together never pass the budget.
 * Time is a fake sleep that records what it was asked to wait: no test waits for real.
 */
function fakeTime(): { deps: RetryDeps; slept: number[] } {
  const slept: number[] = [];
  const deps: RetryDeps = {
    policy: DEFAULT_RETRY_POLICY,
    // The longest backoff of each step: the bound must hold at the worst of the jitter.
    random: () => 1,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
  };
  return { deps, slept };
}

const broken = (): Promise<never> => Promise.reject(new Error('socket hang up'));

describe('retrying', () => {
  it('stops when the next wait would pass the budget, having waited no more than it in all', async () => {
    const { deps, slept } = fakeTime();
    const budget = new RetryBudget(1_000);
    let tries = 0;
    const run = retrying(deps, { what: 'the upload of a.png', retryable: () => true, maxRetries: 50, budget }, () => {
      tries++;
      return broken();
    });
    await expect(run).rejects.toThrow('socket hang up');
    // 250 + 500 fit in 1 000 ms; the next backoff (1 000) does not: the last error is thrown at once.
    expect(slept).toEqual([250, 500]);
    expect(tries).toBe(3);
    expect(budget.spentMs).toBe(750);
    expect(slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget.totalMs);
  });

  it('without a budget, one call waits at most the policy total (retry.maxTotalWaitMs)', async () => {
    const { deps, slept } = fakeTime();
    const policy = { ...DEFAULT_RETRY_POLICY, maxTotalWaitMs: 20_000 };
    const run = retrying({ ...deps, policy }, { what: 'x', retryable: () => true, maxRetries: 1_000 }, broken);
    await expect(run).rejects.toThrow();
    expect(slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(20_000);
    // 250, 500, 1 000, 2 000, 4 000, 8 000 (the cap): the next 8 000 would pass 20 000.
    expect(slept).toEqual([250, 500, 1_000, 2_000, 4_000, 8_000]);
  });

  it('two operations given one budget share it: the second gets only what the first left', async () => {
    const { deps, slept } = fakeTime();
    const budget = new RetryBudget(1_000);
    const options = { what: 'x', retryable: () => true, maxRetries: 10, budget };
    await expect(retrying(deps, options, broken)).rejects.toThrow();
    await expect(retrying(deps, options, broken)).rejects.toThrow();
    // The first took 250 + 500; of the 250 left the second's first backoff (250) still fits.
    expect(slept).toEqual([250, 500, 250]);
    expect(budget.spentMs).toBe(1_000);
  });

  it('says each wait before it starts: why, what, how long, and the failure', async () => {
    const { deps, slept } = fakeTime();
    const notices: Array<{ notice: WaitNotice; sleptBefore: number }> = [];
    let tries = 0;
    const result = await retrying(
      deps,
      {
        what: 'the download of med_1',
        retryable: () => true,
        onWait: (notice) => notices.push({ notice, sleptBefore: slept.length }),
      },
      () => (++tries < 3 ? broken() : Promise.resolve('saved')),
    );
    expect(result).toBe('saved');
    expect(notices).toEqual([
      {
        notice: { reason: 'retry', ms: 250, what: 'the download of med_1', message: 'socket hang up' },
        sleptBefore: 0,
      },
      {
        notice: { reason: 'retry', ms: 500, what: 'the download of med_1', message: 'socket hang up' },
        sleptBefore: 1,
      },
    ]);
    expect(slept).toEqual([250, 500]);
  });

  it('stops after its retries, and never retries a failure not worth it', async () => {
    const { deps, slept } = fakeTime();
    let tries = 0;
    const counted = (): Promise<never> => {
      tries++;
      return broken();
    };
    await expect(retrying(deps, { what: 'x', retryable: () => true, maxRetries: 2 }, counted)).rejects.toThrow();
    expect(tries).toBe(3);
    expect(slept).toHaveLength(2);

    tries = 0;
    slept.length = 0;
    await expect(retrying(deps, { what: 'x', retryable: () => false }, counted)).rejects.toThrow();
    expect(tries).toBe(1);
    expect(slept).toEqual([]);
  });

  it("a caller's own wait (a 429's Retry-After) is said with its reason and still taken from the budget", async () => {
    const { deps, slept } = fakeTime();
    const budget = new RetryBudget(10_000);
    const notices: WaitNotice[] = [];
    const run = retrying(
      deps,
      {
        what: 'asking again with the same Idempotency-Key',
        retryable: () => true,
        budget,
        waitFor: () => ({ ms: 4_000, reason: 'rate_limit' }),
        onWait: (n) => notices.push(n),
      },
      () => Promise.reject(new Error('Too many')),
    );
    await expect(run).rejects.toThrow('Too many');
    // 4 000 + 4 000 fit in 10 000; a third would not.
    expect(slept).toEqual([4_000, 4_000]);
    expect(notices.map((n) => `${n.reason} ${n.ms} ${n.what}`)).toEqual([
      'rate_limit 4000 asking again with the same Idempotency-Key',
      'rate_limit 4000 asking again with the same Idempotency-Key',
    ]);
  });

  it('an aborted operation is not tried again', async () => {
    const { deps, slept } = fakeTime();
    const controller = new AbortController();
    let tries = 0;
    const run = retrying(deps, { what: 'x', retryable: () => true, signal: controller.signal }, () => {
      tries++;
      controller.abort();
      return broken();
    });
    await expect(run).rejects.toThrow('socket hang up');
    expect(tries).toBe(1);
    expect(slept).toEqual([]);
  });
});

describe('takeBackoff', () => {
  it('refuses past the retries or the budget, and takes nothing when it refuses', () => {
    const budget = new RetryBudget(600);
    expect(takeBackoff(0, 3, DEFAULT_RETRY_POLICY, budget, () => 1)).toBe(250);
    expect(takeBackoff(3, 3, DEFAULT_RETRY_POLICY, budget, () => 1)).toBeNull();
    expect(takeBackoff(1, 3, DEFAULT_RETRY_POLICY, budget, () => 1)).toBeNull();
    expect(budget.spentMs).toBe(250);
  });
});
