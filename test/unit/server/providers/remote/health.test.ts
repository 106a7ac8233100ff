import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import { ProviderHealthTracker } from '../../../../../server/providers/remote/health.ts';

describe('ProviderHealthTracker', () => {
  it('is ok until a failure, unhealthy since the first of a run, and ok again after a success', () => {
    let now = Date.UTC(2026, 0, 1);
    const health = new ProviderHealthTracker({ failuresBeforeCooldown: 3, cooldownMs: 60_000, now: () => now });
    expect(health.health('fal')).toEqual({ status: 'ok' });
    health.failure('fal', new ProviderError('fal', 'server', 'fal answered HTTP 502'));
    now += 1000;
    health.failure('fal', new ProviderError('fal', 'timeout', 'fal did not finish'));
    expect(health.health('fal')).toEqual({
      status: 'unhealthy',
      lastError: { class: 'timeout', message: 'fal did not finish', at: new Date(now).toISOString() },
      since: new Date(now - 1000).toISOString(),
    });
    expect(health.inCooldown('fal')).toBe(false);
    health.success('fal');
    expect(health.health('fal')).toEqual({ status: 'ok' });
  });

  it('skips a provider for the cooldown after failures in a row, and at once after a refused key', () => {
    let now = 0;
    const health = new ProviderHealthTracker({ failuresBeforeCooldown: 3, cooldownMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) health.failure('replicate', new ProviderError('replicate', 'failed', 'failed'));
    expect(health.inCooldown('replicate')).toBe(true);
    expect(health.health('replicate').cooldownUntil).toBe(new Date(60_000).toISOString());
    now = 60_001;
    expect(health.inCooldown('replicate')).toBe(false);

    health.failure('openai', new ProviderError('openai', 'auth', 'OpenAI refused its key'));
    expect(health.inCooldown('openai')).toBe(true);
    health.reset('openai');
    expect(health.inCooldown('openai')).toBe(false);
  });

  it("does not count the request's own faults (content policy, invalid input) against the provider", () => {
    const health = new ProviderHealthTracker();
    health.failure('luma', new ProviderError('luma', 'content_policy', 'refused'));
    health.failure('luma', new ProviderError('luma', 'invalid_input', 'bad'));
    expect(health.health('luma')).toEqual({ status: 'ok' });
  });
});
