import { describe, expect, it } from 'vitest';
import * as local from '../../../renderer/src/lib/limits.ts';
import { CONTENT_LIMITS, RATE_WINDOWS } from '../../../shared/api/tiers.ts';
import { ROUTING_EXPLANATIONS, ROUTING_MODES } from '../../../shared/api/generations.ts';

describe('renderer limits mirror shared/api', () => {
  it('are equal to the shared constants', () => {
    expect(local.CONTENT_LIMITS).toEqual(CONTENT_LIMITS);
    expect(local.RATE_WINDOWS).toEqual(RATE_WINDOWS);
    expect(local.ROUTING_MODES).toEqual(ROUTING_MODES);
    expect(local.ROUTING_EXPLANATIONS).toEqual(ROUTING_EXPLANATIONS);
  });
});
