// What `clipdesk usage` and `clipdesk providers` print for a service's answer (docs/cli.md).
import { describe, expect, it } from 'vitest';
import { isPartialUsage, providerLines, providerState, usageLines } from '../../../../electron/cli/listings.ts';
import type { ProviderRecord, Usage } from '../../../../shared/api/index.ts';

const NOW = new Date('2026-12-06T10:00:00Z');

describe('clipdesk usage', () => {
  it("prints a service's own usage body as key: value lines, nested keys joined with dots", () => {
    const theirs = { credits: 12.5, plan: { name: 'pro', seats: [1, 2] }, note: 'beta', empty: {} } as Usage;
    expect(isPartialUsage(theirs)).toBe(true);
    expect(usageLines(theirs)).toEqual([
      'credits: 12.5',
      'plan.name: pro',
      'plan.seats.0: 1',
      'plan.seats.1: 2',
      'note: beta',
      'empty: {}',
    ]);
  });

  it('a partial Clipdesk body: the named lines for what it has, then the rest as it came', () => {
    const partial = { tier: 'free', balance: 3 } as Usage;
    expect(usageLines(partial)).toEqual(['tier\tfree', 'balance: 3']);
  });

  it("Clipdesk's own body prints the named lines only", () => {
    const ours: Usage = {
      tier: 'free',
      limits: {
        rate: { minute: 10, hour: 100, day: 500 },
        concurrency: { video: 1, image: 2 },
        storageBytes: 1e9,
        retentionDays: 7,
      },
      usage: {
        requests: { minute: 1, hour: 2, day: 3 },
        running: { video: 0, image: 0 },
        storageBytes: 2e6,
        reservedBytes: 0,
        cost: { total: 0.5, byKey: [] },
      },
    };
    expect(isPartialUsage(ours)).toBe(false);
    expect(usageLines(ours)).toEqual([
      'tier\tfree',
      'requests\t1/10 per minute, 2/100 per hour, 3/500 per day',
      'running\t0/1 videos, 0/2 images',
      'storage\t2.0 MB of 1000 MB, kept 7 days',
      'cost\t$0.5000',
    ]);
  });
});

describe('clipdesk providers', () => {
  const remote = (over: Partial<ProviderRecord>): ProviderRecord => ({
    id: 'prv_fal',
    slug: 'fal',
    name: 'fal.ai',
    status: 'ok',
    kind: 'remote',
    configured: true,
    enabled: true,
    available: true,
    models: ['kling/v2'],
    ...over,
  });

  it('says "no key" for a remote provider without a key, not its status ok', () => {
    expect(providerState(remote({ configured: false, available: false }), NOW)).toBe('no key');
    expect(providerLines([remote({ configured: false, available: false })], NOW)).toEqual([
      'prv_fal\tfal\tno key\tfal.ai\tkling/v2',
    ]);
  });

  it('says unhealthy, cooling down (until when) and disabled; ok when usable', () => {
    expect(providerState(remote({}), NOW)).toBe('ok');
    expect(providerState(remote({ enabled: false, available: false }), NOW)).toBe('disabled');
    const until = '2026-12-06T10:05:00Z';
    expect(providerState(remote({ status: 'unhealthy', cooldownUntil: until, available: false }), NOW)).toBe(
      `unhealthy, cooling down until ${until}`,
    );
    // A cooldown that has passed is not one.
    expect(providerState(remote({ status: 'ok', cooldownUntil: '2026-12-06T09:00:00Z' }), NOW)).toBe('ok');
  });

  it('a service that tells no status: "-" in its column', () => {
    expect(providerLines([{ id: 'p1', slug: 'p1', name: 'P1' }], NOW)).toEqual(['p1\tp1\t-\tP1\t-']);
  });
});
