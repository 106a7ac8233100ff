import { describe, expect, it } from 'vitest';
import { TIERS } from '../../../../../shared/api/index.ts';
import { accountRetentionDays, retentionPolicyOf } from '../../../../../electron/core/library/index.ts';

// The library's retention terms, kept in the core rather than where the session is wired
// (docs/architecture.md, "One composition root").
describe("the account's retention, for items that carry no expiresAt", () => {
  it("is the account's own once /usage has said it (custom limits)", () => {
    expect(accountRetentionDays({ retentionDays: 45, tier: 'free' })).toBe(45);
  });

  it("else its tier's in the tier table", () => {
    expect(accountRetentionDays({ retentionDays: null, tier: 'pro' })).toBe(TIERS.pro.retentionDays);
  });

  it("else, with no tier or one the table does not know, the Free tier's", () => {
    expect(accountRetentionDays({ retentionDays: null, tier: null })).toBe(TIERS.free.retentionDays);
    expect(accountRetentionDays({ retentionDays: null, tier: 'platinum' })).toBe(TIERS.free.retentionDays);
    expect(accountRetentionDays({ retentionDays: null, tier: 'toString' })).toBe(TIERS.free.retentionDays);
  });
});

describe('the retention setting as the guard takes it', () => {
  it('"mine" keeps everything of mine; off and favourites are as they say', () => {
    expect(retentionPolicyOf('mine')).toBe('everything');
    expect(retentionPolicyOf('favourites')).toBe('favourites');
    expect(retentionPolicyOf('off')).toBe('off');
  });
});
